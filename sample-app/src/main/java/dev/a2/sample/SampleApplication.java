package dev.a2.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small chat on A2: messages are events of the {@code chat} contract, and the {@code summary}
 * reducer keeps a count and the last message of each room.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}

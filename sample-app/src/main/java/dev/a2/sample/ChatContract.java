package dev.a2.sample;

import dev.a2.Contract;
import dev.a2.Reducer;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Size;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The contract of the sample: what a chat room's log may hold, and how it folds into state.
 * Adding the starter, a DataSource and this bean is all A2 needs.
 */
@Configuration(proxyBeanMethods = false)
class ChatContract {

	record MessageSent(@NotBlank @Size(max = 2000) String text, @NotBlank @Size(max = 64) String author) {
	}

	record Summary(int messages, String lastMessage) {
	}

	@Bean
	Contract chat() {
		return Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.presence("typing", Boolean.class)
			.reducer("summary", Reducer.of(Summary.class, new Summary(0, ""), (summary, event) -> {
				MessageSent sent = event.payload(MessageSent.class);
				return new Summary(summary.messages() + 1, sent.author() + ": " + sent.text());
			}))
			.build();
	}

}

package dev.a2.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Without {@code spring.ai.openai.api-key}, switches Spring AI's OpenAI auto-configurations off (they
 * would fail at start-up for want of a key), so the tour runs on its {@link OfflineChatModel}: the
 * README's command needs no key and no network. With a key, OpenAI's chat model is the assistant's.
 * Added last, so anything the application or its user sets wins.
 */
class OfflineModelDefaults implements EnvironmentPostProcessor {

	private static final String[] MODELS = { "chat", "embedding", "image", "audio.speech", "audio.transcription",
			"moderation" };

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (StringUtils.hasText(environment.getProperty("spring.ai.openai.api-key"))) {
			return;
		}
		Map<String, Object> off = new LinkedHashMap<>();
		for (String model : MODELS) {
			off.put("spring.ai.model." + model, "none");
		}
		environment.getPropertySources().addLast(new MapPropertySource("a2SampleOfflineModel", off));
	}

}

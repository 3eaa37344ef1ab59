package dev.a2.sample;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which model the assistant talks to: the offline one without a key (the README's command needs no
 * network), OpenAI's with {@code spring.ai.openai.api-key} (no call is made here: nothing is asked).
 */
class AssistantModelTests {

	@Nested
	@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
	class WithoutAKey {

		@Autowired
		ChatModel model;

		@Test
		void theAssistantUsesTheOfflineModel() {
			assertThat(this.model).isInstanceOf(OfflineChatModel.class);
		}

	}

	@Nested
	@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = "spring.ai.openai.api-key=sk-test")
	class WithAnOpenAiKey {

		@Autowired
		ChatModel model;

		@Test
		void theAssistantUsesOpenAi() {
			assertThat(this.model).isInstanceOf(OpenAiChatModel.class);
		}

	}

}

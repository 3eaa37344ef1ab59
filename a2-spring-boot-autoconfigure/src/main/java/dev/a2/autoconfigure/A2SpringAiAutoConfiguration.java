package dev.a2.autoconfigure;

import dev.a2.ai.ReplySettings;
import dev.a2.ai.ReplyStream;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * AI replies, when Spring AI and {@code a2-spring-ai} are on the classpath: a {@link ReplyStream}
 * configured by {@code a2.ai.*} for consumers that stream a model's answer into a session.
 */
@AutoConfiguration(after = A2AutoConfiguration.class)
@EnableConfigurationProperties(A2Properties.class)
@ConditionalOnClass({ ChatModel.class, ReplyStream.class })
public final class A2SpringAiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReplyStream a2ReplyStream(A2Properties properties) {
		A2Properties.Ai ai = properties.getAi();
		return new ReplyStream(new ReplySettings(ai.getFlushInterval(), ai.getFlushTokens(), ai.getParticipant(), ai.getMaxSteps()));
	}

}

package dev.a2.ai;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.tool.ToolCallback;

/**
 * What {@link ReplyStream#converse} talks to: a streaming model, an optional system prompt, the
 * tools the model may call, and which of them need a person's approval before they run.
 */
public final class Assistant {

	private final ChatModel model;

	private final @Nullable String system;

	private final List<ToolCallback> tools;

	private final Set<String> approvalRequired;

	private Assistant(Builder builder) {
		this.model = builder.model;
		this.system = builder.system;
		this.tools = List.copyOf(builder.tools);
		this.approvalRequired = builder.approvalRequired;
	}

	public static Builder builder(ChatModel model) {
		return new Builder(model);
	}

	ChatModel model() {
		return this.model;
	}

	@Nullable String system() {
		return this.system;
	}

	List<ToolCallback> tools() {
		return this.tools;
	}

	boolean needsApproval(String tool) {
		return this.approvalRequired.contains(tool);
	}

	/** Whether a tool of it waits for a person's approval: a reply may end waiting. */
	boolean asksForApproval() {
		return !this.approvalRequired.isEmpty();
	}

	@Nullable ToolCallback tool(String name) {
		for (ToolCallback tool : this.tools) {
			if (tool.getToolDefinition().name().equals(name)) {
				return tool;
			}
		}
		return null;
	}

	public static final class Builder {

		private final ChatModel model;

		private @Nullable String system;

		private final List<ToolCallback> tools = new ArrayList<>();

		private Set<String> approvalRequired = Set.of();

		private Builder(ChatModel model) {
			this.model = Objects.requireNonNull(model, "model");
		}

		/** The system prompt sent before the conversation. */
		public Builder system(String system) {
			this.system = system;
			return this;
		}

		/** Tools the model may call; they run in the run, at least once (give them idempotent effects). */
		public Builder tools(ToolCallback... tools) {
			this.tools.addAll(Arrays.asList(tools));
			return this;
		}

		/** Tools that run only after a person pushed {@code tool.approved} for the call. */
		public Builder approvalRequired(String... tools) {
			this.approvalRequired = Set.of(tools);
			return this;
		}

		public Assistant build() {
			return new Assistant(this);
		}

	}

}

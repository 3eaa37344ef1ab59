package dev.a2.docs;

import java.util.List;
import java.util.Map;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.HistoryPage;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.Reducer;
import dev.a2.Session;
import dev.a2.SessionState;
import dev.a2.ai.AiEvents;
import dev.a2.ai.Assistant;
import dev.a2.ai.ReplyStream;
import dev.a2.ai.SessionChatMemoryRepository;
import dev.a2.spring.A2Consumer;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.function.FunctionToolCallback;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The code blocks of README.md's API at a glance, docs/consumers.md, docs/aborts-and-takeover.md and
 * docs/ai-replies.md that are whole code, so that they compile: {@link DocumentationSnippetsTests} checks
 * that each page shows each tagged region verbatim. The records and interfaces are the glue a reader adds.
 */
class PageSnippets {

	record MessageSent(String text, String author, String thread) {
	}

	record Summary(int messages) {
	}

	record StopRequested(String thread) {
	}

	record OrderPlaced(String sku, int quantity, long amountCents) {
	}

	record OrderShipped(String sku) {
	}

	record PaymentCaptured(String chargeId) {
	}

	record Charge(String id) {
	}

	record Stopped(String question, String answer) {
	}

	record Done(String question, String answer) {
	}

	record RefundRequest(String orderId) {
	}

	interface Gateway {

		Charge charge(long amountCents, String idempotencyKey);

	}

	interface Model {

		Iterable<String> stream(String question);

	}

	Gateway gateway;

	Model model;

	String question;

	ToolCallback refundTool;

	JdbcTemplate jdbc;

	Contract readmeContract() {
		// tag::readme-contract[]
		Contract chat = Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.presence("online", Boolean.class)                        // a presence field and its value's type
			.presence("typing", Boolean.class)
			.reducer("summary", Reducer.of(Summary.class, new Summary(0), (summary, event) ->
				event.type().equals("message.sent") ? new Summary(summary.messages() + 1) : summary))
			.build();
		// end::readme-contract[]
		return chat;
	}

	void readmeSession(A2Server a2) {
		// tag::readme-session[]
		Session room = a2.session("chat", "lobby");
		List<Event> stored = room.append(NewEvent.of("message.sent", new MessageSent("hi", "ann", "ann"), "m-1"));
		room.append(NewEvent.of("message.sent", new MessageSent("hi", "ann", "ann"), "m-1"));  // same id: not appended again
		HistoryPage page = room.history(0, 100);                     // events after index 0, and the head
		SessionState<Summary> summary = room.state("summary", Summary.class);
		room.presence(PresenceWrite.of("ann", Map.of("typing", true)));
		room.clear(page.head());                                     // start over, unless something was added
		long reached = room.consume("projection");                   // read your writes of a fixed-lane consumer
		// end::readme-session[]
	}

	void consumerBuilder() {
		// tag::consumers-builder[]
		Consumer.builder("orders", "shipper")
			.types("order.placed")
			.lane(Lane.keyed((input) -> input.session()))
			.run((context) -> NewEvent.of("order.shipped", new OrderShipped(context.event().payload(OrderPlaced.class).sku())));
		// end::consumers-builder[]
	}

	// tag::consumers-effect-key[]
	@A2Consumer(contract = "orders", name = "payments", types = "order.placed")
	NewEvent capture(ConsumerContext context, OrderPlaced order) {
		Charge charge = gateway.charge(order.amountCents(), context.effectKey("charge"));
		return NewEvent.of("payment.captured", new PaymentCaptured(charge.id()));
	}
	// end::consumers-effect-key[]

	List<NewEvent> shipUnlessCancelled(ConsumerContext context) {
		// tag::consumers-latest-state[]
		OrderStatus now = context.session().latestState("status", OrderStatus.class).state();
		if (now.cancelled()) {
			return List.of();
		}
		// end::consumers-latest-state[]
		return List.of(NewEvent.of("order.shipped", new OrderShipped("sku-1")));
	}

	record OrderStatus(boolean cancelled) {
	}

	// tag::aborts-annotation[]
	@A2Consumer(contract = "chat", name = "assistant", types = "question.asked", laneKey = "#session",
			abortOn = "stop.requested", abortWhen = "#event.payload.reply == #trigger.id")
	// end::aborts-annotation[]
	void answer(ConsumerContext context) {
	}

	Consumer answerer() {
		return Consumer.builder("chat", "assistant")
			.types("question.asked")
			// tag::aborts-returned[]
			.run(context -> {
				StringBuilder answer = new StringBuilder();
				for (String token : model.stream(question)) {          // interrupted by the abort
					if (context.signal().isAborted()) {
						return NewEvent.of("answer.stopped", new Stopped(context.event().id(), answer.toString()));
					}
					answer.append(token);
				}
				return NewEvent.of("answer.done", new Done(context.event().id(), answer.toString()));
			});
			// end::aborts-returned[]
	}

	Contract aiContract() {
		// tag::ai-contract[]
		Contract.Builder chat = Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.event("stop.requested", StopRequested.class);
		AiEvents.register(chat, (event) -> (event.payload() instanceof MessageSent m) ? m.author() + ": " + m.text() : null);
		return chat.build();
		// end::ai-contract[]
	}

	// tag::ai-assistant[]
	@Bean
	Consumer assistant(ChatModel model, ReplyStream replies) {
		Assistant assistant = Assistant.builder(model)
			.system("You are a helpful assistant.")
			.tools(refundTool)                 // Spring AI ToolCallbacks
			.approvalRequired("refund")        // runs only after a person's tool.approved
			.build();
		return Consumer.builder("chat", "assistant")
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED, "stop.requested")
			.lane(Lane.keyed((input) -> input.session()))
			.abortOn("stop.requested")
			.run((context) -> {
				replies.converse(context, assistant);
				return null;
			});
	}
	// end::ai-assistant[]

	void aiStream(ReplyStream replies, ConsumerContext context, ChatClient chatClient) {
		// tag::ai-stream[]
		replies.stream(context, chatClient.prompt()
			.messages(ReplyStream.conversation(context))
			.stream()
			.chatResponse());
		// end::ai-stream[]
	}

	ToolCallback aiRefund() {
		// tag::ai-refund[]
		ToolCallback refundTool = FunctionToolCallback.<RefundRequest, String>builder("refund", (request, toolContext) -> {
				String key = (String) toolContext.getContext().get(ReplyStream.TOOL_EFFECT_KEY);
				jdbc.update("insert into refund (effect_key, order_id) values (?, ?) on conflict do nothing",
						key, request.orderId());
				// the same answer on a run again: the refund this conversation asked for is made
				return "refunded";
			})
			.description("Refund an order")
			.inputType(RefundRequest.class)
			.build();
		// end::ai-refund[]
		return refundTool;
	}

	ChatMemory aiMemory(A2Server server) {
		// tag::ai-memory[]
		ChatMemoryRepository memory = new SessionChatMemoryRepository(server, "chat");
		ChatMemory chatMemory = MessageWindowChatMemory.builder().chatMemoryRepository(memory).build();
		// end::ai-memory[]
		return chatMemory;
	}

}

package dev.a2.benchmarks;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * What a Spring MVC application would write instead of A2's push: an annotated controller that binds
 * the same body with Jackson and inserts the same row as {@link BaselinePush}, with {@code JdbcClient}
 * on the request's thread.
 */
@RestController
class BaselineController {

	private final BaselinePush store;

	BaselineController(BaselinePush store) {
		this.store = store;
	}

	@PostMapping(BaselinePush.PATH)
	public BaselinePush.Stored push(@PathVariable String session, @RequestBody BaselinePush.Push push) {
		// the benchmark pushes one event per request: the controller stores the first
		return this.store.insert(session, push.events().get(0));
	}

}

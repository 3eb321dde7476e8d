package dev.kvlab.memory;

/**
 * The node holds as many bytes of values for requests in flight as its {@link MemoryBudget} allows: 503.
 * Without a stack trace: under overload a node refuses hundreds of requests a second on its event
 * loops, and the refusal is an answer, not a fault, so walking the stack for each would spend the
 * time the admitted requests and the small ones need.
 */
public class OverBudgetException extends RuntimeException {

    public OverBudgetException(long limit) {
        super("the node already holds values of requests in flight up to its limit of " + limit
                + " bytes (kvlab.memory.max-bytes-in-flight); retry later", null, false, false);
    }
}

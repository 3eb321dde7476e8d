package dev.kvlab.memory;

/** The node holds as many bytes of values for requests in flight as its {@link MemoryBudget} allows: 503. */
public class OverBudgetException extends RuntimeException {

    public OverBudgetException(long limit) {
        super("the node already holds values of requests in flight up to its limit of " + limit
                + " bytes (kvlab.memory.max-bytes-in-flight); retry later");
    }
}

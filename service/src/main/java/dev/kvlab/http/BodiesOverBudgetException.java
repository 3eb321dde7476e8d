package dev.kvlab.http;

/** The node holds as many request bodies as {@code kvlab.api.max-body-bytes-in-flight} allows (503). */
public class BodiesOverBudgetException extends RuntimeException {

    public BodiesOverBudgetException(long limit) {
        super("the node already holds request bodies up to its limit of " + limit
                + " bytes (kvlab.api.max-body-bytes-in-flight); retry later");
    }
}

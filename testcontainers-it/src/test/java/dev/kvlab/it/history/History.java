package dev.kvlab.it.history;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Every operation of a run, recorded concurrently by the clients. */
public final class History {

    private final ConcurrentLinkedQueue<Operation> operations = new ConcurrentLinkedQueue<>();
    private final long origin = System.nanoTime();

    /** Nanoseconds since the history began, on the clock the operations' times use. */
    public long now() {
        return System.nanoTime() - origin;
    }

    public void record(Operation operation) {
        operations.add(operation);
    }

    public List<Operation> operations() {
        return new ArrayList<>(operations);
    }

    public long count(Operation.Type type, Operation.Outcome outcome) {
        return operations.stream().filter(op -> op.type() == type && op.outcome() == outcome).count();
    }
}

package dev.kvlab.storage;

/** What one call of a batch ({@link LocalStore#batch}) came to; a failed call fails alone. */
public sealed interface Outcome permits Outcome.Done, Outcome.Found, Outcome.Absent, Outcome.Failed {

    /** A write, stored (or older than what is stored, which is the same to its caller). */
    record Done() implements Outcome {
    }

    /** A read that found the key's record, a tombstone included. */
    record Found(Record record) implements Outcome {
    }

    /** A read of a key this replica never saw. */
    record Absent() implements Outcome {
    }

    /** The call failed; the calls before and after it in the batch may not have. */
    record Failed(RuntimeException error) implements Outcome {
    }

    Outcome DONE = new Done();
    Outcome ABSENT = new Absent();

    /** A read's outcome: found or absent. */
    static Outcome ofRead(Record record) {
        return record == null ? ABSENT : new Found(record);
    }
}

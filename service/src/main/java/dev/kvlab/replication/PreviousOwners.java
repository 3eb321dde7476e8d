package dev.kvlab.replication;

import java.util.List;

/**
 * Where a key lived before the topology last changed, while its records move to their new owners:
 * a read asks these too, and answers the newest record of both.
 */
@FunctionalInterface
public interface PreviousOwners {

    /** The first {@code from} nodes of the key in the topology before the last change, if it changed recently; else none. */
    List<String> of(byte[] key, int from);

    PreviousOwners NONE = (key, from) -> List.of();
}

package dev.kvlab.cluster;

import java.io.IOException;
import java.util.List;

/** Reads the targets of a name's SRV records. */
public interface SrvLookup {

    /**
     * The target host names (without the trailing dot) of {@code name}'s SRV records; empty when
     * the name has none.
     *
     * @throws IOException when DNS does not answer or fails, so no conclusion can be drawn
     */
    List<String> targets(String name) throws IOException;
}

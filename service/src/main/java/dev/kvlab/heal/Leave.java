package dev.kvlab.heal;

import java.util.List;

/** A leave: the nodes that stay, the passes it made, and the last one finished (null before the first). */
public record Leave(List<String> remaining, long startedMillis, int passes, Sweep lastPass) {
}

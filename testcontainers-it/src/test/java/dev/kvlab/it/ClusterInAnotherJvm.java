package dev.kvlab.it;

import dev.kvlab.it.fixture.KvlabCluster;

/**
 * Starts a cluster, prints its id and waits to be ended from outside: lets {@link FixtureCleanupIT}
 * interrupt (SIGTERM) or kill (SIGKILL) a JVM that holds containers.
 */
public final class ClusterInAnotherJvm {

    /** The line that says the cluster is up: {@code READY <cluster id>}. */
    static final String READY = "READY ";

    private ClusterInAnotherJvm() {
    }

    public static void main(String[] args) throws InterruptedException {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        KvlabCluster cluster = KvlabCluster.ofSize(size);
        cluster.start();
        System.out.println(READY + cluster.id());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

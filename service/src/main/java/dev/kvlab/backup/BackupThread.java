package dev.kvlab.backup;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The one thread of a node's backup work that blocks: reading and hashing a checkpoint's files,
 * counting its records, calls to the target. One thread, so a backup never takes more than a core
 * from serving; a short queue, since a node takes one backup at a time.
 */
public final class BackupThread implements AutoCloseable {

    private final ThreadPoolExecutor pool;
    private final Scheduler scheduler;

    public BackupThread() {
        pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(64), runnable -> {
            Thread thread = new Thread(runnable, "kvlab-backup");
            thread.setDaemon(true);
            return thread;
        }, new ThreadPoolExecutor.AbortPolicy());
        scheduler = Schedulers.fromExecutorService(pool, "kvlab-backup");
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}

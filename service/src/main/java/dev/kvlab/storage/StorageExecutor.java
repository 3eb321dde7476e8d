package dev.kvlab.storage;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The bounded pool that runs every RocksDB call, so none runs on a Netty event loop. Fixed threads
 * and a bounded queue: when the queue is full a task is rejected (the caller answers 503) instead
 * of piling up latency and memory.
 */
public final class StorageExecutor implements AutoCloseable {

    private final ThreadPoolExecutor pool;
    private final Scheduler scheduler;

    public StorageExecutor(int threads, int queueCapacity) {
        AtomicInteger counter = new AtomicInteger();
        ThreadFactory factory = runnable -> {
            Thread thread = new Thread(runnable, "kvlab-storage-" + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queueCapacity), factory, new ThreadPoolExecutor.AbortPolicy());
        pool.prestartAllCoreThreads();
        scheduler = Schedulers.fromExecutorService(pool, "kvlab-storage");
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    /** Runs the task on a storage thread; throws {@link java.util.concurrent.RejectedExecutionException} when the queue is full or the executor closed. */
    void execute(Runnable task) {
        pool.execute(task);
    }

    /** Tasks waiting for a thread now; for metrics. */
    public int queued() {
        return pool.getQueue().size();
    }

    /** Lets queued and running calls finish (they may still answer a draining request), then stops. */
    @Override
    public void close() {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            pool.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}

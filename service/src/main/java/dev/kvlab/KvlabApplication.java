package dev.kvlab;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** A kvlab node: the client API, the coordinator, and this node's RocksDB replica. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class KvlabApplication {

    public static void main(String[] args) {
        SpringApplication.run(KvlabApplication.class, args);
    }
}

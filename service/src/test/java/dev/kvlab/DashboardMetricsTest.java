package dev.kvlab;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import java.io.IOException;
import java.net.http.HttpRequest.BodyPublishers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard the chart ships (helm/kvlab/dashboards/kvlab.json) queries only series a
 * node serves on /actuator/prometheus, under the names Micrometer's Prometheus registry gives them:
 * a panel on a renamed or missing metric would stay empty without anyone noticing.
 */
class DashboardMetricsTest {

    /** A metric name in a PromQL expression: the name before its label selector. */
    private static final Pattern SERIES = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{");
    private static final Pattern EXPR = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"");

    @Test
    void everySeriesTheDashboardQueriesIsServed() throws IOException {
        Set<String> queried = queriedSeries(Files.readString(dashboard()));
        assertThat(queried).as("the dashboard's series").contains("kvlab_peer_hints_pending", "kvlab_peer_repair_last_complete_seconds", "kvlab_repair_rounds_total",
                "kvlab_handoff_records_moved_total", "kvlab_requests_seconds_bucket");

        try (InProcessCluster cluster = InProcessCluster.start(2)) {
            // Meters that appear on first use: a request's timer, and a quorum that failed.
            assertThat(cluster.client(0).put("metered", "v".getBytes(), "2/2").statusCode()).isEqualTo(201);
            cluster.stopNode(1);
            assertThat(cluster.client(0).put("metered", "w".getBytes(), "2/2").statusCode()).isEqualTo(504);

            String page = text(cluster.management(0).send("GET", "/actuator/prometheus", BodyPublishers.noBody()));
            Set<String> served = new TreeSet<>();
            page.lines().filter(line -> !line.startsWith("#") && !line.isBlank())
                    .forEach(line -> served.add(line.split("[{ ]", 2)[0]));
            assertThat(served).as("served on /actuator/prometheus").containsAll(queried);
        }
    }

    static Set<String> queriedSeries(String dashboard) {
        Set<String> names = new TreeSet<>();
        Matcher expr = EXPR.matcher(dashboard);
        while (expr.find()) {
            Matcher series = SERIES.matcher(expr.group(1).replace("\\\"", "\""));
            while (series.find()) {
                names.add(series.group(1));
            }
        }
        return names;
    }

    /** The chart's dashboard, found from the module's directory (where Maven runs the tests) upwards. */
    private static Path dashboard() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("helm/kvlab/dashboards/kvlab.json");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("no helm/kvlab/dashboards/kvlab.json above " + Path.of("").toAbsolutePath());
    }
}

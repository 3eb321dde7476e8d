package dev.kvlab.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.xbill.DNS.ExtendedResolver;
import org.xbill.DNS.Lookup;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Resolver;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/** SRV lookups with dnsjava, against the system's resolvers or one given server; nothing cached. */
public final class DnsjavaSrvLookup implements SrvLookup {

    private final Resolver resolver;

    public DnsjavaSrvLookup(String server, Duration timeout) {
        this.resolver = server == null || server.isBlank() ? new ExtendedResolver() : new SimpleResolver(address(server));
        this.resolver.setTimeout(timeout);
    }

    @Override
    public List<String> targets(String name) throws IOException {
        Lookup lookup;
        try {
            lookup = new Lookup(Name.fromString(name.endsWith(".") ? name : name + "."), Type.SRV);
        } catch (TextParseException e) {
            throw new IOException("not a DNS name: " + name, e);
        }
        lookup.setResolver(resolver);
        lookup.setCache(null);
        lookup.setSearchPath((Name[]) null);
        Record[] records = lookup.run();
        return switch (lookup.getResult()) {
            case Lookup.SUCCESSFUL -> {
                List<String> targets = new ArrayList<>(records.length);
                for (Record record : records) {
                    targets.add(((SRVRecord) record).getTarget().toString(true));
                }
                yield targets;
            }
            case Lookup.HOST_NOT_FOUND, Lookup.TYPE_NOT_FOUND -> List.of();
            default -> throw new IOException("SRV lookup of " + name + " failed: " + lookup.getErrorString());
        };
    }

    private static InetSocketAddress address(String server) {
        int colon = server.lastIndexOf(':');
        return colon < 0
                ? new InetSocketAddress(server, 53)
                : new InetSocketAddress(server.substring(0, colon), Integer.parseInt(server.substring(colon + 1)));
    }
}

package dev.kvlab.testing;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * A real DNS server on a UDP port of the loopback interface, answering SRV queries from a zone the
 * test controls, with messages encoded by dnsjava. It can also go silent, like a DNS server that
 * is down.
 */
public final class TestDnsServer implements AutoCloseable {

    private final DatagramSocket socket;
    private final Map<Name, List<Record>> srv = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean answering = true;

    public TestDnsServer() throws SocketException {
        socket = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        thread = Thread.ofPlatform().daemon().name("test-dns").start(this::serve);
    }

    /** {@code host:port} of the server. */
    public String address() {
        return "127.0.0.1:" + socket.getLocalPort();
    }

    /** Publishes SRV records of {@code name} pointing at {@code targets} (port 8080). */
    public void srv(String name, List<String> targets) throws TextParseException {
        Name owner = Name.fromString(absolute(name));
        List<Record> records = new ArrayList<>();
        for (String target : targets) {
            records.add(new SRVRecord(owner, DClass.IN, 5, 0, 100 / Math.max(1, targets.size()), 8080, Name.fromString(absolute(target))));
        }
        srv.put(owner, records);
    }

    /** Drops queries without answering (true) or answers again (false). */
    public void silent(boolean silent) {
        answering = !silent;
    }

    private void serve() {
        byte[] buffer = new byte[512];
        while (!socket.isClosed()) {
            DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(packet);
                if (!answering) {
                    continue;
                }
                byte[] answer = answer(new Message(java.util.Arrays.copyOf(packet.getData(), packet.getLength())));
                socket.send(new DatagramPacket(answer, answer.length, packet.getSocketAddress()));
            } catch (IOException e) {
                if (socket.isClosed()) {
                    return;
                }
            }
        }
    }

    private byte[] answer(Message query) {
        Record question = query.getQuestion();
        Message response = new Message(query.getHeader().getID());
        response.getHeader().setFlag(Flags.QR);
        response.getHeader().setFlag(Flags.AA);
        response.addRecord(question, Section.QUESTION);
        List<Record> records = question.getType() == Type.SRV ? srv.get(question.getName()) : null;
        if (records == null || records.isEmpty()) {
            response.getHeader().setRcode(Rcode.NXDOMAIN);
        } else {
            records.forEach(record -> response.addRecord(record, Section.ANSWER));
        }
        return response.toWire(512);
    }

    private static String absolute(String name) {
        return name.endsWith(".") ? name : name + ".";
    }

    @Override
    public void close() throws InterruptedException {
        socket.close();
        thread.join(1000);
    }
}

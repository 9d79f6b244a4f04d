package bench.peer;

import jakarta.jws.WebService;
import jakarta.xml.ws.Endpoint;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.xml.datatype.XMLGregorianCalendar;
import org.tempuri.ServiceSoapImpl;

/**
 * The CXF peer: the wsdl2java skeleton of our SOAP 1.1 port with LoginYInsertarEvento answering
 * an in-memory counter after a plain credential compare (CXF/JAXB have already parsed every field,
 * the doubles and both xsd:dateTime values). The other operations keep the generated bodies; the
 * bench never calls them. Published with {@link Endpoint#publish} on CXF's Jetty transport with its
 * default thread pool.
 *
 * <p>Usage: java -cp classes:lib/* bench.peer.CounterPeer USER PASSWORD. Listens on 127.0.0.1 on
 * a free port, prints one JSON line {"url": ...} when ready; SIGTERM ends the JVM.
 */
@WebService(
    serviceName = "Service",
    portName = "ServiceSoap",
    targetNamespace = "http://tempuri.org/",
    wsdlLocation = "classpath:wsdl/service.wsdl",
    endpointInterface = "org.tempuri.ServiceSoap")
public class CounterPeer extends ServiceSoapImpl {
  private static final AtomicInteger NEXT_ID = new AtomicInteger();
  private static final AtomicLong CALLS = new AtomicLong();

  private final String user;
  private final String password;

  CounterPeer(String user, String password) {
    this.user = user;
    this.password = password;
  }

  @Override
  public int loginYInsertarEvento(
      String systemUser,
      String password,
      String dominio,
      String nroSerie,
      String codigo,
      double latitud,
      double longitud,
      double altitud,
      double velocidad,
      XMLGregorianCalendar fechaHoraEvento,
      XMLGregorianCalendar fechaHoraRecepcion) {
    CALLS.incrementAndGet();
    if (!user.equals(systemUser) || !this.password.equals(password)) return -1;
    return NEXT_ID.getAndIncrement() % Integer.MAX_VALUE + 1;
  }

  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length != 2) {
      System.err.println("usage: CounterPeer USER PASSWORD");
      System.exit(2);
    }
    int port;
    // A free port: Jetty binds it right after (CXF's Jetty engine does not report port 0's choice).
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    String url = "http://127.0.0.1:" + port + "/service.asmx";
    Endpoint.publish(url, new CounterPeer(args[0], args[1]));
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> System.err.println("cxf peer: answered " + CALLS.get() + " calls")));
    System.out.println("{\"url\":\"" + url + "\"}");
    System.out.flush();
    Thread.currentThread().join();
  }
}

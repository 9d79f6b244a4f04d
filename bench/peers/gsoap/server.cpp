// The gSOAP peer: our WSDL (wsdl2h + soapcpp2 -j, built by bench/peers/gsoap/build.ts) served by
// gSOAP's generated C++ service class with an in-memory LoginYInsertarEvento: gSOAP parses and
// deserialises the whole request (every field, the doubles and both xsd:dateTime values), the
// handler compares the credentials and answers an incrementing counter. Nothing is stored.
//
// Usage: gsoap-peer <threads> <user> <password>
//   threads = 0: one thread accepts and serves (gSOAP's iterative server);
//   threads = N: the main thread accepts and queues sockets, N worker threads serve them (the
//   thread pool with a socket queue from gSOAP's user guide, "multi-threaded server").
// Listens on 127.0.0.1 on a free port and prints one JSON line {"url": ...} when ready; exits on
// SIGTERM/SIGINT. Connections are kept alive (SOAP_IO_KEEPALIVE) up to gSOAP's default of 100
// requests each, as a gSOAP service would be configured for throughput.

#include "soapServiceSoapService.h"
#include "ServiceSoap.nsmap"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<int> next_id{0};
std::atomic<long> calls{0};
std::string user;
std::string password;

class Peer : public ServiceSoapService {
 public:
  explicit Peer(soap_mode mode) : ServiceSoapService(mode) {}
  Peer() = default;

  // A worker's own context, as the generated copy() does, but of this class.
  Peer *copy() override {
    Peer *dup = new Peer();
    soap_done(dup->soap);
    soap_copy_context(dup->soap, this->soap);
    return dup;
  }

  int LoginYInsertarEvento(_tempuri__LoginYInsertarEvento *req, _tempuri__LoginYInsertarEventoResponse &res) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    bool ok = req->SystemUser != nullptr && req->Password != nullptr && *req->SystemUser == user && *req->Password == password;
    res.LoginYInsertarEventoResult = ok ? next_id.fetch_add(1, std::memory_order_relaxed) % 2147483647 + 1 : -1;
    return SOAP_OK;
  }

  // The SOAP 1.2 binding's copy of the same operation.
  int LoginYInsertarEvento_(_tempuri__LoginYInsertarEvento *req, _tempuri__LoginYInsertarEventoResponse &res) override {
    return LoginYInsertarEvento(req, res);
  }
};

// The socket queue between the accepting thread and the workers.
std::mutex queue_lock;
std::condition_variable queue_ready;
std::deque<SOAP_SOCKET> queue;

void worker(Peer *service) {
  for (;;) {
    SOAP_SOCKET s;
    {
      std::unique_lock<std::mutex> lock(queue_lock);
      queue_ready.wait(lock, [] { return !queue.empty(); });
      s = queue.front();
      queue.pop_front();
    }
    service->soap->socket = s;
    service->serve();  // keep-alive: serves this connection until it closes or hits max_keep_alive
    service->destroy();
    soap_closesock(service->soap);
  }
}

void stop(int) {
  std::fprintf(stderr, "gsoap peer: answered %ld calls\n", calls.load());
  std::_Exit(0);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <threads> <user> <password>\n", argv[0]);
    return 2;
  }
  int threads = std::atoi(argv[1]);
  user = argv[2];
  password = argv[3];
  std::signal(SIGTERM, stop);
  std::signal(SIGINT, stop);
  std::signal(SIGPIPE, SIG_IGN);

  Peer service(SOAP_IO_KEEPALIVE);
  service.soap->bind_flags = SO_REUSEADDR;
  // A client that goes silent must not hold a worker (or the only thread) for long.
  service.soap->recv_timeout = 5;
  service.soap->send_timeout = 5;
  if (!soap_valid_socket(service.bind("127.0.0.1", 0, 1024))) {
    service.soap_print_fault(stderr);
    return 1;
  }
  // Port 0 above: the kernel's choice. (Bound to an IPv4 address, so the address is an IPv4 one.)
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (getsockname(service.soap->master, reinterpret_cast<sockaddr *>(&bound), &len) != 0 || bound.sin_family != AF_INET) {
    std::perror("getsockname");
    return 1;
  }
  std::printf("{\"url\":\"http://127.0.0.1:%d/service.asmx\",\"threads\":%d}\n", ntohs(bound.sin_port), threads);
  std::fflush(stdout);

  std::vector<std::thread> pool;
  for (int i = 0; i < threads; i++) pool.emplace_back(worker, service.copy());

  for (;;) {
    if (!soap_valid_socket(service.accept())) {
      service.soap_print_fault(stderr);
      continue;
    }
    if (threads == 0) {
      service.serve();
      service.destroy();
      soap_closesock(service.soap);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(queue_lock);
      queue.push_back(service.soap->socket);
    }
    // The worker owns the socket now: the accepting context must not close it.
    service.soap->socket = SOAP_INVALID_SOCKET;
    queue_ready.notify_one();
  }
}

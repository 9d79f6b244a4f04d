// The gSOAP peer: our WSDL (wsdl2h + soapcpp2 -j, built by bench/peers/gsoap/build.ts) served by
// gSOAP's generated C++ service class with an in-memory LoginYInsertarEvento: gSOAP parses and
// deserialises the whole request (every field, the doubles and both xsd:dateTime values), the
// handler compares the credentials and answers an incrementing counter. Nothing is stored, unless
// a database is given: then the same work as ours, durably (see Store below).
//
// Usage: gsoap-peer <threads> <user> <password> [database last-report-upsert]
//   threads = 0: one thread accepts and serves (gSOAP's iterative server);
//   threads = N: the main thread accepts and queues sockets, N worker threads serve them (the
//   thread pool with a socket queue from gSOAP's user guide, "multi-threaded server");
//   database: a gateway.sqlite our migrations created (the bench makes one); each event is
//   inserted into its events table, its last report moved (with ours' upsert statement, passed
//   as the last argument), and answered with its id once the commit is on disk.
// Listens on 127.0.0.1 on a free port and prints one JSON line {"url": ...} when ready; exits on
// SIGTERM/SIGINT. Connections are kept alive (SOAP_IO_KEEPALIVE) up to gSOAP's default of 100
// requests each, as a gSOAP service would be configured for throughput.

#include "soapServiceSoapService.h"
#include "ServiceSoap.nsmap"

#include <sqlite3.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <ctime>
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

// One event as the handler read it, waiting for the commit that stores it.
struct Pending {
  std::string system_user, dominio, nro_serie, codigo;
  double latitud, longitud, altitud, velocidad;
  long long event_ms, reception_ms, received_at;
  long long id = 0;
  bool done = false;
  bool ok = false;
};

// Durable storage the way ours does it (shared/backends/embedded): one committing thread with its
// own connection (WAL, synchronous=FULL), every event queued while the last commit ran in one
// transaction (group commit), ids allocated in memory above MAX(id), the same row and indexes
// and the last-report upsert. What it leaves out: the dedupe index, the sensors and raw fields.
class Store {
 public:
  Store(const char *file, const char *upsert_sql) {
    check(sqlite3_open_v2(file, &db_, SQLITE_OPEN_READWRITE, nullptr), "open");
    exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = FULL");
    exec("PRAGMA busy_timeout = 5000");
    check(sqlite3_prepare_v2(db_,
                             "INSERT INTO events (id, system_user, dominio, nro_serie, codigo, latitud, longitud, altitud, velocidad, rumbo, "
                             "valid_position, valido, event_time_text, event_time_ms, event_time_ticks, reception_time_text, reception_time_ms, "
                             "reception_time_ticks, received_at, crudo, sensors, operation, dedupe_key, stored_at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 1, NULL, ?, ?, 0, ?, ?, 0, ?, NULL, '[]', 'LoginYInsertarEvento', ?, ?)",
                             -1, &insert_, nullptr),
          "prepare insert");
    // Ours' own statement, as the bench passes it (shared/backends/embedded/trips.ts).
    check(sqlite3_prepare_v2(db_, upsert_sql, -1, &upsert_, nullptr), "prepare upsert");
    sqlite3_stmt *max = nullptr;
    check(sqlite3_prepare_v2(db_, "SELECT COALESCE(MAX(id), 0) FROM events", -1, &max, nullptr), "prepare max");
    if (sqlite3_step(max) == SQLITE_ROW) next_id_ = sqlite3_column_int64(max, 0) + 1;
    sqlite3_finalize(max);
    committer_ = std::thread([this] { run(); });
  }

  // Called by a worker: queues the event and waits until its commit is durable (or failed).
  void append(Pending &p) {
    std::unique_lock<std::mutex> lock(lock_);
    queue_.push_back(&p);
    queued_.notify_one();
    done_.wait(lock, [&p] { return p.done; });
  }

 private:
  void run() {
    std::vector<Pending *> group;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(lock_);
        queued_.wait(lock, [this] { return !queue_.empty(); });
        group.swap(queue_);
      }
      bool ok = commit(group);
      {
        std::lock_guard<std::mutex> lock(lock_);
        for (Pending *p : group) {
          p->ok = ok;
          p->done = true;
        }
      }
      done_.notify_all();
      group.clear();
    }
  }

  bool commit(std::vector<Pending *> &group) {
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) return false;
    long long stored_at = now_ms();
    bool ok = true;
    for (Pending *p : group) {
      char event_text[32], reception_text[32], key[512];
      iso(p->event_ms, event_text);
      iso(p->reception_ms, reception_text);
      std::snprintf(key, sizeof key, "%s|%s|%s|%lld", p->system_user.c_str(), p->dominio.c_str(), p->codigo.c_str(), p->event_ms);
      p->id = next_id_++;
      sqlite3_stmt *s = insert_;
      sqlite3_bind_int64(s, 1, p->id);
      sqlite3_bind_text(s, 2, p->system_user.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(s, 3, p->dominio.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(s, 4, p->nro_serie.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(s, 5, p->codigo.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_double(s, 6, p->latitud);
      sqlite3_bind_double(s, 7, p->longitud);
      sqlite3_bind_double(s, 8, p->altitud);
      sqlite3_bind_double(s, 9, p->velocidad);
      sqlite3_bind_text(s, 10, event_text, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 11, p->event_ms);
      sqlite3_bind_text(s, 12, reception_text, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 13, p->reception_ms);
      sqlite3_bind_int64(s, 14, p->received_at);
      sqlite3_bind_text(s, 15, key, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 16, stored_at);
      ok = ok && sqlite3_step(s) == SQLITE_DONE;
      sqlite3_reset(s);
      sqlite3_bind_text(upsert_, 1, p->system_user.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(upsert_, 2, p->dominio.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_int64(upsert_, 3, p->event_ms);
      sqlite3_bind_int(upsert_, 4, 0);
      ok = ok && sqlite3_step(upsert_) == SQLITE_DONE;
      sqlite3_reset(upsert_);
    }
    if (ok && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK) return true;
    std::fprintf(stderr, "gsoap peer: commit failed: %s\n", sqlite3_errmsg(db_));
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  }

  static long long now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  static void iso(long long ms, char *out) {
    time_t t = static_cast<time_t>(ms / 1000);
    tm parts{};
    gmtime_r(&t, &parts);
    std::strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &parts);
  }

  void exec(const char *sql) { check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr), sql); }

  void check(int rc, const char *what) {
    if (rc == SQLITE_OK) return;
    std::fprintf(stderr, "gsoap peer: %s: %s\n", what, db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    std::exit(1);
  }

  sqlite3 *db_ = nullptr;
  sqlite3_stmt *insert_ = nullptr;
  sqlite3_stmt *upsert_ = nullptr;
  long long next_id_ = 1;
  std::mutex lock_;
  std::condition_variable queued_, done_;
  std::vector<Pending *> queue_;
  std::thread committer_;
};

Store *store = nullptr;

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
    if (!ok || store == nullptr) {
      res.LoginYInsertarEventoResult = ok ? next_id.fetch_add(1, std::memory_order_relaxed) % 2147483647 + 1 : -1;
      return SOAP_OK;
    }
    if (req->Dominio == nullptr || req->NroSerie == nullptr || req->Codigo == nullptr) {
      res.LoginYInsertarEventoResult = -3;
      return SOAP_OK;
    }
    Pending p;
    p.system_user = *req->SystemUser;
    p.dominio = *req->Dominio;
    p.nro_serie = *req->NroSerie;
    p.codigo = *req->Codigo;
    p.latitud = req->Latitud;
    p.longitud = req->Longitud;
    p.altitud = req->Altitud;
    p.velocidad = req->Velocidad;
    p.event_ms = static_cast<long long>(req->FechaHoraEvento) * 1000;
    p.reception_ms = static_cast<long long>(req->FechaHoraRecepcion) * 1000;
    p.received_at = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    store->append(p);
    res.LoginYInsertarEventoResult = p.ok ? static_cast<int>(p.id % 2147483647) : -5;
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
  if (argc != 4 && argc != 6) {
    std::fprintf(stderr, "usage: %s <threads> <user> <password> [database last-report-upsert]\n", argv[0]);
    return 2;
  }
  if (argc == 6) store = new Store(argv[4], argv[5]);
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
  std::printf("{\"url\":\"http://127.0.0.1:%d/service.asmx\",\"threads\":%d,\"durable\":%s}\n", ntohs(bound.sin_port), threads, store != nullptr ? "true" : "false");
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

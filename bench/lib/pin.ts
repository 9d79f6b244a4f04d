/**
 * CPU pinning for the benches (`taskset`, util-linux): BENCH_PIN_WRK=1 runs the load generator on
 * CPU 1 only, BENCH_PIN_SERVER=0 the server on CPU 0 only (any taskset CPU list). On a machine with
 * few cores the load generator otherwise competes with the server it measures; pinned, what each
 * side costs stays apart (the gateway's writer thread and GC helpers share the server's CPUs).
 * taskset execs the command, so the child's pid is the command's own.
 */
export function pinned(command: string, args: readonly string[], cpus: string | undefined): [string, string[]] {
  if (cpus === undefined || cpus === '') return [command, [...args]];
  return ['taskset', ['-c', cpus, command, ...args]];
}

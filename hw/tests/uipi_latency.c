// User-interrupt latency on the 4-core RTL (docs/benchmarks.md section 1), harts 0 and 1
// in U-mode; senders and handlers are hand-written assembly so only the hardware path counts:
//   send_to_utvec: rdcycle right before uipi.send on hart 0 -> rdcycle as the first instruction
//                  at utvec on hart 1 (the harts' cycle counters count every clock since the
//                  common reset; nothing here executes wfi, so they agree)
//   round_trip:    hart 0: rdcycle, uipi.send -> hart 1's handler: uipi.read, uipi.send back,
//                  uret -> hart 0's handler: uipi.read, uret -> rdcycle on hart 0
// Each is repeated N times: printed are the first run (cold caches), min and mean of the rest.
//   send_to_c_handler: the same, but to the first line of a C handler behind the generic
//                  U trap vector that saves all 31 registers (hw/tests/common/start.S)
//   send_to_utvec_self: the same on one hart (hart 0 sends to its own slot), so on one counter:
//                  it should equal send_to_utvec, which shows the two harts' counters agree.
//   round_trip_direct: round_trip with handlers whose uipi.read is directly followed by uret.
// Spurious entries (the handler entered again after its read emptied the slot) are counted for
// both handler forms and must be 0.
// Check of the counter agreement: a memory flag is passed 0 -> 1 and 1 -> 0, each side
// stamping rdcycle at store and at first sight; both differences must be positive, so the two
// counters differ by less than the smaller of them (printed as counter_skew_bound_cycles).
#include "uintr_setup.h"
const char* test_name = "uipi_latency";
#define NH 2
#define N 16
#define STR(x) #x
#define XSTR(x) STR(x)
#define UIPI_ASM(op, rd, rs1) ".insn r " XSTR(UIPI_OPCODE) ", " XSTR(UIPI_FUNCT3) ", " XSTR(op) ", " #rd ", " #rs1 ", x0\n"
#define URET_ASM ".word " XSTR(UIPI_URET) "\n"

volatile uint64_t ready1, stop1, ready2, stop2, recv_cycle, recv_count;
volatile uint64_t ready_c, stop_c;
volatile uint64_t spurious;   // handler entries whose uipi.read found nothing (wire still high)
volatile uint64_t flag01, flag10, t01_send, t01_seen, t10_send, t10_seen;
static uint64_t lat[N], rt[N], self[N], clat[N];

// hart 1, one-way: t6 = the cycle at utvec's first instruction; clear pending, record, count
asm(".text\n.balign 4\n.globl lat_vec\nlat_vec:\n"
    "  rdcycle t6\n"
    UIPI_ASM(UIPI_READ, t3, x0)
    "  beqz t3, 1f\n"
    "  la t4, recv_cycle\n  sd t6, 0(t4)\n"
    "  la t4, recv_count\n  ld t5, 0(t4)\n  addi t5, t5, 1\n  sd t5, 0(t4)\n"
    URET_ASM
    "1:  la t4, spurious\n  li t3, 1\n  amoadd.d x0, t3, (t4)\n" URET_ASM
// hart 1, ping-pong server: clear pending, answer through sender entry s11
    ".balign 4\n.globl pp_server_vec\npp_server_vec:\n"
    UIPI_ASM(UIPI_READ, t3, x0)
    "  beqz t3, 1f\n"
    UIPI_ASM(UIPI_SEND, x0, s11)
    URET_ASM
    "1:  la t4, spurious\n  li t3, 1\n  amoadd.d x0, t3, (t4)\n" URET_ASM
// hart 0, ping-pong client: clear pending, OR it into t2 (the wait loop's flag)
    ".balign 4\n.globl pp_client_vec\npp_client_vec:\n"
    UIPI_ASM(UIPI_READ, t3, x0)
    "  or t2, t2, t3\n"
    "  bnez t3, 1f\n  la t6, spurious\n  li t3, 1\n  amoadd.d x0, t3, (t6)\n"
    "1:" URET_ASM
// The same ping-pong with handlers that end in the read directly followed by uret (nothing
// uses the result, which would make uret wait for it); entries are counted, so an entry
// beyond one per send is a spurious one (the wire still high at uret: hw/tests/uret_race.c).
    ".balign 4\n.globl pp_server_direct_vec\npp_server_direct_vec:\n"
    "  la t4, server_entries\n  ld t5, 0(t4)\n  addi t5, t5, 1\n  sd t5, 0(t4)\n"
    UIPI_ASM(UIPI_SEND, x0, s11)
    UIPI_ASM(UIPI_READ, t3, x0)
    URET_ASM
    ".balign 4\n.globl pp_client_direct_vec\npp_client_direct_vec:\n"
    "  la t4, client_entries\n  ld t3, 0(t4)\n  addi t3, t3, 1\n  sd t3, 0(t4)\n"
    "  li t2, 1\n"
    UIPI_ASM(UIPI_READ, t3, x0)
    URET_ASM);
extern char lat_vec[], pp_server_vec[], pp_client_vec[], pp_server_direct_vec[], pp_client_direct_vec[];
volatile uint64_t ready3, stop3;
// each handler's own counter, on a cache line of its own (no coherence miss in the handler)
volatile uint64_t server_entries __attribute__((aligned(64)));
volatile uint64_t client_entries __attribute__((aligned(64)));
static uint64_t pad_after[8] __attribute__((aligned(64), used));
static uint64_t rtd[N];

void u_trap(trap_frame* f) {                     // hart 1, behind u_trap_vector
  uint64_t t = rdcycle();
  (void)f;
  if (uipi_read()) { recv_cycle = t; recv_count++; }
}

static uint64_t hart1(uint64_t arg) {
  (void)arg;
  while (!flag01) {}
  t01_seen = rdcycle();
  for (volatile int d = 0; d < 20; d++) {}
  t10_send = rdcycle();
  flag10 = 1;
  CSR_WRITE(CSR_UTVEC, (uint64_t)lat_vec);
  ready1 = 1;
  asm volatile("csrsi %0, 1\n 1: ld t0, %1\n beqz t0, 1b\n csrci %0, 1"
               :: "i"(CSR_USTATUS), "m"(stop1) : "t0", "t3", "t4", "t5", "t6", "memory");
  CSR_WRITE(CSR_UTVEC, (uint64_t)u_trap_vector);
  ready_c = 1;
  CSR_WRITE(CSR_USTATUS, 1);
  while (!stop_c) {}
  CSR_WRITE(CSR_USTATUS, 0);
  CSR_WRITE(CSR_UTVEC, (uint64_t)pp_server_vec);
  ready2 = 1;
  asm volatile("mv s11, %2\n csrsi %0, 1\n 1: ld t0, %1\n beqz t0, 1b\n csrci %0, 1"
               :: "i"(CSR_USTATUS), "m"(stop2), "r"(0ull) : "t0", "t3", "t4", "s11", "memory");
  CSR_WRITE(CSR_UTVEC, (uint64_t)pp_server_direct_vec);
  ready3 = 1;
  asm volatile("mv s11, %2\n csrsi %0, 1\n 1: ld t0, %1\n beqz t0, 1b\n csrci %0, 1"
               :: "i"(CSR_USTATUS), "m"(stop3), "r"(0ull) : "t0", "t3", "t4", "t5", "s11", "memory");
  return 0;
}

static uint64_t hart0(uint64_t arg) {
  (void)arg;
  for (volatile int d = 0; d < 20; d++) {}
  t01_send = rdcycle();
  flag01 = 1;
  while (!flag10) {}
  t10_seen = rdcycle();
  CSR_WRITE(CSR_UTVEC, (uint64_t)lat_vec);
  for (int i = 0; i < N; i++) {
    for (volatile int d = 0; d < 50; d++) {}
    uint64_t t;
    asm volatile("csrsi %1, 1\n rdcycle %0\n" UIPI_ASM(UIPI_SEND, x0, %2)
                 "1: ld t0, %3\n bne t0, %4, 1b\n csrci %1, 1"
                 : "=&r"(t) : "i"(CSR_USTATUS), "r"(0ull), "m"(recv_count), "r"((uint64_t)i + 1)
                 : "t0", "t3", "t4", "t5", "t6", "memory");
    self[i] = recv_cycle - t;
  }
  recv_count = 0;
  asm volatile("fence" ::: "memory");
  while (!ready1) {}
  for (int i = 0; i < N; i++) {
    for (volatile int d = 0; d < 50; d++) {}
    uint64_t t;
    asm volatile("rdcycle %0\n" UIPI_ASM(UIPI_SEND, x0, %1) : "=&r"(t) : "r"(1ull) : "memory");
    while (recv_count != (uint64_t)i + 1) {}
    lat[i] = recv_cycle - t;
  }
  stop1 = 1;
  while (!ready_c) {}
  recv_count = 0;
  asm volatile("fence" ::: "memory");
  for (int i = 0; i < N; i++) {
    for (volatile int d = 0; d < 50; d++) {}
    uint64_t t;
    asm volatile("rdcycle %0\n" UIPI_ASM(UIPI_SEND, x0, %1) : "=&r"(t) : "r"(1ull) : "memory");
    while (recv_count != (uint64_t)i + 1) {}
    clat[i] = recv_cycle - t;
  }
  stop_c = 1;
  while (!ready2) {}
  CSR_WRITE(CSR_UTVEC, (uint64_t)pp_client_vec);
  for (int i = 0; i < N; i++) {
    for (volatile int d = 0; d < 50; d++) {}
    uint64_t c;
    asm volatile("li t2, 0\n csrsi %1, 1\n rdcycle t4\n" UIPI_ASM(UIPI_SEND, x0, %2)
                 "1: beqz t2, 1b\n rdcycle t5\n csrci %1, 1\n sub %0, t5, t4"
                 : "=r"(c) : "i"(CSR_USTATUS), "r"(1ull) : "t2", "t3", "t4", "t5", "t6", "memory");
    rt[i] = c;
  }
  stop2 = 1;
  while (!ready3) {}
  CSR_WRITE(CSR_UTVEC, (uint64_t)pp_client_direct_vec);
  for (int i = 0; i < N; i++) {
    for (volatile int d = 0; d < 50; d++) {}
    uint64_t c;
    asm volatile("li t2, 0\n csrsi %1, 1\n rdcycle t6\n" UIPI_ASM(UIPI_SEND, x0, %2)
                 "1: beqz t2, 1b\n rdcycle t5\n sub %0, t5, t6\n"
                 "li t5, 30\n 2: addi t5, t5, -1\n bnez t5, 2b\n csrci %1, 1"   // room for a re-entry
                 : "=&r"(c) : "i"(CSR_USTATUS), "r"(1ull) : "t2", "t3", "t4", "t5", "t6", "memory");
    rtd[i] = c;
  }
  for (volatile int d = 0; d < 50; d++) {}
  stop3 = 1;
  return 0;
}

static void report(const char* name, uint64_t* v) {
  uint64_t mn = ~0ull, sum = 0;
  for (int i = 1; i < N; i++) { if (v[i] < mn) mn = v[i]; sum += v[i]; }
  char key[64]; int n = 0;
  for (const char* s = name; *s; s++) key[n++] = *s;
  const char* suf[] = {"_cold", "_min", "_mean"};
  uint64_t val[] = {v[0], mn, sum / (N - 1)};
  for (int k = 0; k < 3; k++) {
    int m = n;
    for (const char* s = suf[k]; *s; s++) key[m++] = *s;
    key[m] = 0;
    result(key, val[k]);
  }
}

int main(uint64_t hart) {
  if (hart >= NH) for (;;) {}
  wait_for_harts(NH);
  if (hart == 0) uintr_global_setup(NH, 1);
  barrier(NH);
  uintr_hart_setup(hart, u_trap_vector);
  barrier(NH);
  CHECK_EQ(run_in_mode(PRV_U, hart == 0 ? hart0 : hart1, 0), 0, 1 + hart);
  if (hart != 0) for (;;) {}
  report("send_to_utvec_cycles", lat);
  report("round_trip_cycles", rt);
  report("send_to_c_handler_cycles", clat);
  report("send_to_utvec_self_cycles", self);
  int64_t d01 = (int64_t)(t01_seen - t01_send), d10 = (int64_t)(t10_seen - t10_send);
  CHECK(d01 > 0 && d10 > 0, 4);
  result("counter_skew_bound_cycles", d01 < d10 ? d01 : d10);
  report("round_trip_direct_cycles", rtd);
  result("spurious_entries", spurious);
  uint64_t direct = (server_entries - N) + (client_entries - N);
  result("spurious_entries_direct", direct);
  CHECK_EQ(recv_count, N, 3);
  CHECK_EQ(spurious, 0, 5);
  CHECK(server_entries >= N && client_entries >= N, 6);
  CHECK_EQ(direct, 0, 7);
  return 0;
}

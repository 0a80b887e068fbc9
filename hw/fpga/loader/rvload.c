/*
 * rvload: load a RISC-V image into the PS DDR window and start the RISC-V cores.
 * Runs on the PS (aarch64 Linux, as root) of the AXU15EG with the uintr bitstream loaded.
 *
 *   rvload IMAGE.bin        hold the cores in reset, copy IMAGE to RISC-V DRAM (PS window),
 *                           verify it, release the cores
 *   rvload --hold           only put the cores back into reset
 *   rvload --mem FILE ...   use FILE instead of /dev/mem (tests: a sparse file stands for the
 *                           physical address space)
 *
 * The window (board.toml ps.dram_window) must be reserved from Linux (reserved-memory, no-map),
 * otherwise /dev/mem refuses it or Linux uses the same pages. The window is mapped uncached
 * (O_SYNC): S_AXI_HP0_FPD is not coherent with the A53 caches, so data must reach DDR before
 * the cores start. Device-type mappings fault on unaligned or DC ZVA accesses, which memcpy may
 * use, hence the explicit 64-bit copy loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board.h"     /* generated from hw/fpga/board.toml */
#include "platform.h"  /* generated from platform/platform.toml */

#define DRAM_BASE   PLATFORM_PS_DRAM_WINDOW_BASE
#define DRAM_SIZE   PLATFORM_PS_DRAM_WINDOW_SIZE
#define GPIO_BASE   PLATFORM_PS_RESET_GPIO_BASE
#define GPIO_SIZE   PLATFORM_PS_RESET_GPIO_SIZE
#define GPIO_DATA   PLATFORM_PS_GPIO_DATA
#define GPIO_TRI    PLATFORM_PS_GPIO_TRI
#define RUN_MASK    (1u << PLATFORM_PS_RUN_BIT)

/* The window is what RISC-V sees as DRAM; the two must agree in size. */
_Static_assert(PLATFORM_PS_DRAM_WINDOW_SIZE == PLATFORM_MEMMAP_DRAM_SIZE, "PS window != RISC-V DRAM");

static void die(const char *what)
{
    fprintf(stderr, "rvload: %s: %s\n", what, strerror(errno));
    exit(1);
}

static volatile void *map(int fd, uint64_t base, size_t len, const char *what)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)base);
    if (p == MAP_FAILED)
        die(what);
    return p;
}

static void set_run(volatile uint32_t *gpio, int run)
{
    gpio[GPIO_TRI / 4] = 0;                       /* all bits outputs */
    gpio[GPIO_DATA / 4] = run ? RUN_MASK : 0;
    __sync_synchronize();
    (void)gpio[GPIO_DATA / 4];                    /* read back: the write has reached the PL */
}

static uint8_t *read_image(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0)
        die(path);
    if (st.st_size <= 0 || (uint64_t)st.st_size > DRAM_SIZE) {
        fprintf(stderr, "rvload: %s: size %lld does not fit the %#llx-byte DRAM window\n", path,
                (long long)st.st_size, (unsigned long long)DRAM_SIZE);
        exit(1);
    }
    *len = (size_t)st.st_size;
    uint8_t *buf = calloc(1, (*len + 7) & ~(size_t)7);   /* padded to whole 64-bit words */
    if (!buf || fread(buf, 1, *len, f) != *len)
        die(path);
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    const char *mem = "/dev/mem", *image = NULL;
    int hold_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mem") && i + 1 < argc)
            mem = argv[++i];
        else if (!strcmp(argv[i], "--hold"))
            hold_only = 1;
        else if (argv[i][0] != '-' && !image)
            image = argv[i];
        else {
            fprintf(stderr, "usage: rvload [--mem FILE] (IMAGE.bin | --hold)\n");
            return 2;
        }
    }
    if (!hold_only && !image) {
        fprintf(stderr, "usage: rvload [--mem FILE] (IMAGE.bin | --hold)\n");
        return 2;
    }

    /* Read the image first: a bad image must not stop cores that are running. */
    size_t len = 0;
    uint8_t *buf = hold_only ? NULL : read_image(image, &len);

    int fd = open(mem, O_RDWR | O_SYNC);
    if (fd < 0)
        die(mem);
    volatile uint32_t *gpio = map(fd, GPIO_BASE, GPIO_SIZE, "map reset GPIO");
    set_run(gpio, 0);
    printf("rvload: RISC-V cores held in reset\n");
    if (hold_only)
        return 0;

    size_t words = (len + 7) / 8, maplen = words * 8;
    volatile uint64_t *dram = map(fd, DRAM_BASE, maplen, "map DRAM window");
    const uint64_t *src = (const uint64_t *)buf;
    for (size_t i = 0; i < words; i++)
        dram[i] = src[i];
    __sync_synchronize();
    for (size_t i = 0; i < words; i++) {
        if (dram[i] != src[i]) {
            fprintf(stderr, "rvload: verify failed at PS %#llx\n", (unsigned long long)(DRAM_BASE + i * 8));
            return 1;
        }
    }
    printf("rvload: %zu bytes at PS %#llx (RISC-V %#llx), verified\n", len,
           (unsigned long long)DRAM_BASE, (unsigned long long)PLATFORM_MEMMAP_DRAM_BASE);

    set_run(gpio, 1);
    printf("rvload: RISC-V cores released\n");
    return 0;
}

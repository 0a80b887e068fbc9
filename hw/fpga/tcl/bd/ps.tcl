# Zynq UltraScale+ PS as the AXU15EG carries it: DDR4 (4 GiB, 64-bit), UART0 and SD1 on MIO,
# one PL clock and reset, M_AXI_HPM0_FPD for PS control of the PL, S_AXI_HP0_FPD for the
# RISC-V memory port, and one PL-to-PS interrupt (the console tap).
#
# DDR4 timing is that of 8 Gbit x16 components at DDR4-2400 (docs/board-axu15eg.md: 4 GiB DDR4-2400,
# 64-bit => four x16 parts). Verify against the board's memory parts before the first power-on;
# a wrong value here shows up as FSBL DDR training failure, not as a build error.
fpga_ip_cell zynq_ps ps {
    PSU__DDRC__MEMORY_TYPE          {DDR 4}
    PSU__DDRC__COMPONENTS           {Components}
    PSU__DDRC__BUS_WIDTH            {64 Bit}
    PSU__DDRC__ECC                  {Disabled}
    PSU__DDRC__SPEED_BIN            {DDR4_2400R}
    PSU__CRF_APB__DDR_CTRL__FREQMHZ {1200}
    PSU__DDRC__DRAM_WIDTH           {16 Bits}
    PSU__DDRC__DEVICE_CAPACITY      {8192 MBits}
    PSU__DDRC__BG_ADDR_COUNT        {1}
    PSU__DDRC__BANK_ADDR_COUNT      {2}
    PSU__DDRC__ROW_ADDR_COUNT       {16}
    PSU__DDRC__COL_ADDR_COUNT       {10}
    PSU__DDRC__RANK_ADDR_COUNT      {0}
    PSU__DDRC__CL                   {16}
    PSU__DDRC__CWL                  {12}
    PSU__DDRC__T_RCD                {16}
    PSU__DDRC__T_RP                 {16}
    PSU__DDRC__T_RC                 {45.32}
    PSU__DDRC__T_RAS_MIN            {32}
    PSU__DDRC__T_FAW                {30.0}

    PSU__UART0__PERIPHERAL__ENABLE  {1}
    PSU__UART0__PERIPHERAL__IO      {MIO 42 .. 43}
    PSU__SD1__PERIPHERAL__ENABLE    {1}
    PSU__SD1__PERIPHERAL__IO        {MIO 46 .. 51}
    PSU__SD1__SLOT_TYPE             {SD 2.0}
    PSU__SD1__DATA_TRANSFER_MODE    {4Bit}

    PSU__FPGA_PL0_ENABLE            {1}
    PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ {100}
    PSU__NUM_FABRIC_RESETS          {1}

    PSU__USE__M_AXI_GP0             {1}
    PSU__MAXIGP0__DATA_WIDTH        {32}
    PSU__USE__M_AXI_GP1             {0}
    PSU__USE__M_AXI_GP2             {0}
    PSU__USE__S_AXI_GP2             {1}
    PSU__SAXIGP2__DATA_WIDTH        {64}
    PSU__USE__IRQ0                  {1}
}

# Builds the boot ROM image rocket-chip embeds (the DTB is appended at elaboration).
#   make -f bootrom.mk OUT=<dir> SRC=<hw/bootrom> GEN_PY=<platform/gen.py>
CROSS   ?= riscv64-unknown-elf-
CC      := $(CROSS)gcc
OBJCOPY := $(CROSS)objcopy
NM      := $(CROSS)nm
TOML    := $(dir $(GEN_PY))platform.toml

all: $(OUT)/bootrom.img
	@:

# gen.py rewrites the header only when its text changes.
$(OUT)/platform.h: $(GEN_PY) $(TOML)
	@mkdir -p $(OUT)
	python3 $(GEN_PY) --dts $@
	@touch $@

$(OUT)/linker.ld: $(SRC)/linker.ld.S $(OUT)/platform.h
	$(CC) -E -P -x c -I$(OUT) $< -o $@

$(OUT)/bootrom.elf: $(SRC)/bootrom.S $(OUT)/linker.ld $(OUT)/platform.h
	$(CC) -march=rv64imac_zicsr -mabi=lp64 -nostdlib -nostartfiles -static -I$(OUT) \
	  -T $(OUT)/linker.ld -o $@ $<

# The DTB is appended right after the image, so the image must end exactly at _dtb.
$(OUT)/bootrom.img: $(OUT)/bootrom.elf
	$(OBJCOPY) -O binary $< $@
	@size=$$(stat -c %s $@); \
	 start=$$($(NM) $< | awk '$$3=="_start"{print $$1}'); \
	 dtb=$$($(NM) $< | awk '$$3=="_dtb"{print $$1}'); \
	 if [ $$((0x$$dtb - 0x$$start)) -ne $$size ]; then \
	   echo "bootrom: _dtb at 0x$$dtb is not the end of the $$size-byte image" >&2; rm -f $@; exit 1; fi

# Key provisioning at flash time (PROTOCOL.md 8.4, 8.5), included by the sensor node's Makefile after uno.mk:
#   make key-eep NODE_ID=3 KEY_FILE=keys.txt [COUNTER_FLOOR=N]   the EEPROM image holding node3's key, into KEY_EEP
#   make upload NODE_ID=3 KEY_FILE=keys.txt BOOTLOADER_EEPROM=yes   flash + key through a bootloader that writes EEPROM
#   make ispload NODE_ID=3 KEY_FILE=keys.txt ISP_PROG=usbasp        flash + key through an ISP programmer
#   make upload NODE_ID=3                                           flash only: warns that the node has no key yet
# The key goes from the keys file into a mode-600 image under build/ and from there to avrdude: never into the
# sketch, a make variable or a command line of its own. The image is deleted once avrdude has run.
# COUNTER_FLOOR=N (the gateway's last accepted counter for the node) also writes the counter reservation, N + 1:
# for a board whose EEPROM was erased.
KEY_EEP ?= $(OBJDIR)/key.eep

.PHONY: key-eep
key-eep:
	@test -n "$(KEY_FILE)" || { echo "key-eep: give KEY_FILE=<keys file> (and NODE_ID=<n>)" >&2; exit 1; }
	@test -n "$(NODE_ID)" || { echo "key-eep: give NODE_ID=<n>: the key of line node<n> is written" >&2; exit 1; }
	@mkdir -p $(dir $(KEY_EEP))
	@$(FIRMWARE_DIR)/scripts/node-key-eeprom $(if $(COUNTER_FLOOR),--counter-floor "$(COUNTER_FLOOR)") \
	  "$(KEY_FILE)" "$(NODE_ID)" "$(KEY_EEP)"
	@echo "key-eep: $(KEY_EEP) holds node$(NODE_ID)'s key at EEPROM offset 0$(if $(COUNTER_FLOOR), and reservation $(COUNTER_FLOOR) + 1 at 16)"

ifdef COUNTER_FLOOR
ifndef KEY_FILE
$(error COUNTER_FLOOR without KEY_FILE: the floor is written with the node's key (make key-eep))
endif
endif

# ISP programming erases the chip before writing flash, and the EEPROM with it (key and counter reservation) unless
# the EESAVE fuse is programmed: high fuse bit 3, programmed = 0 (ATmega328P datasheet, "Fuse High Byte"). ispload
# programs it first, in an avrdude run of its own: that run writes no flash, so it erases nothing, and EESAVE
# takes effect as soon as it is programmed. The board's stock high fuse with bit 3 cleared: Uno 0xDE -> 0xD6, Nano
# 0xDA -> 0xD2. EESAVE_HIGH_FUSE= overrides it. This run verifies the fuse (no -V).
AVRDUDE_BEFORE_KEY := $(AVRDUDE)
EESAVE_HIGH_FUSE ?= $(if $(ISP_HIGH_FUSE),$(shell printf '0x%02X' $$(( $(ISP_HIGH_FUSE) & 0xF7 ))))

.PHONY: isp-eesave
isp-eesave:
	@test -n "$(EESAVE_HIGH_FUSE)" || { echo "isp-eesave: no high fuse known for BOARD_TAG=$(BOARD_TAG); give EESAVE_HIGH_FUSE=0x.." >&2; exit 1; }
	@echo "isp-eesave: high fuse $(EESAVE_HIGH_FUSE) (EESAVE programmed: a chip erase keeps the EEPROM)"
	$(AVRDUDE_BEFORE_KEY) $(filter-out -V,$(AVRDUDE_COM_OPTS)) $(AVRDUDE_ISP_OPTS) -U hfuse:w:$(EESAVE_HIGH_FUSE):m

ispload: isp-eesave

ifdef KEY_FILE
ifeq ($(SIGNING),0)
$(error KEY_FILE with SIGNING=0: a v1 node has no key)
endif
# The Uno's stock bootloader (Optiboot 4.4) has no EEPROM support and writes EEPROM data into flash instead, so the
# bootloader path must be asked for by name.
upload: key-eep bootloader-eeprom-check
ispload: isp-eesave key-eep
# ispload's AVRDUDE_ISPLOAD_OPTS is AVRDUDE_UPLOAD_HEX (Arduino.mk), so this one line serves both.
AVRDUDE_UPLOAD_HEX += -U eeprom:w:$(KEY_EEP):i
# The flashing run (upload's do_upload, ispload) deletes the key image afterwards, whether avrdude succeeded or not.
override AVRDUDE := $(FIRMWARE_DIR)/scripts/avrdude-then-forget $(KEY_EEP) $(AVRDUDE)
endif

.PHONY: bootloader-eeprom-check
bootloader-eeprom-check:
	@test "$(BOOTLOADER_EEPROM)" = yes || { \
	  echo "upload KEY_FILE=: the Uno's stock bootloader (Optiboot 4.4) cannot write EEPROM and would write the key" \
	       "into flash. With a bootloader that writes EEPROM (Optiboot 8 built with SUPPORT_EEPROM, urboot) add" \
	       "BOOTLOADER_EEPROM=yes; else use an ISP programmer: make ispload ISP_PROG=usbasp ... (README)" >&2; exit 1; }

# A signing node flashed without its key sends nothing until it gets one: say so at upload, with the command that
# gives it its key over the same cable (scripts/provision, PROTOCOL.md 8.9). The provision script flashes with
# PROVISIONING=serial: it provisions right after.
ifndef KEY_FILE
ifneq ($(SIGNING),0)
ifneq ($(PROVISIONING),serial)
upload: no-key-warning
endif
endif
endif

.PHONY: no-key-warning
no-key-warning:
	@{ echo; \
	  echo "*** WARNING: flashing the signing sensor node WITHOUT a key: node$(or $(NODE_ID),1) will send NOTHING until it is provisioned."; \
	  echo "*** Give it its key over this same USB cable once the upload is done (the key is made in the keys file if missing):"; \
	  echo "***   firmware/scripts/provision $(or $(PORT),PORT) $(or $(NODE_ID),1) --keys keys.txt --no-flash"; \
	  echo "*** or flash and provision in one step: firmware/scripts/provision $(or $(PORT),PORT) $(or $(NODE_ID),1) --keys keys.txt"; \
	  echo; } >&2

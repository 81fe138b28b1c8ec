# Key provisioning at flash time (PROTOCOL.md 8.4, 8.5), included by the sensor node's Makefile after uno.mk:
#   make key-eep NODE_ID=3 KEY_FILE=keys.txt             the EEPROM image holding node3's key, into KEY_EEP
#   make upload NODE_ID=3 KEY_FILE=keys.txt BOOTLOADER_EEPROM=yes   flash + key through a bootloader that writes EEPROM
#   make ispload NODE_ID=3 KEY_FILE=keys.txt ISP_PROG=usbasp        flash + key through an ISP programmer
# The key goes from the keys file into a mode-600 image under build/ and from there to avrdude: never into the
# sketch, a make variable or a command line of its own.
KEY_EEP ?= $(OBJDIR)/key.eep

.PHONY: key-eep
key-eep:
	@test -n "$(KEY_FILE)" || { echo "key-eep: give KEY_FILE=<keys file> (and NODE_ID=<n>)" >&2; exit 1; }
	@test -n "$(NODE_ID)" || { echo "key-eep: give NODE_ID=<n>: the key of line node<n> is written" >&2; exit 1; }
	@mkdir -p $(dir $(KEY_EEP))
	@$(FIRMWARE_DIR)/scripts/node-key-eeprom "$(KEY_FILE)" "$(NODE_ID)" "$(KEY_EEP)"
	@echo "key-eep: $(KEY_EEP) holds node$(NODE_ID)'s key at EEPROM offset 0"

ifdef KEY_FILE
ifeq ($(SIGNING),0)
$(error KEY_FILE with SIGNING=0: a v1 node has no key)
endif
# The Uno's stock bootloader (Optiboot 4.4) has no EEPROM support and writes EEPROM data into flash instead, so the
# bootloader path must be asked for by name.
upload: key-eep bootloader-eeprom-check
AVRDUDE_UPLOAD_HEX += -U eeprom:w:$(KEY_EEP):i
ispload: key-eep
AVRDUDE_ISPLOAD_OPTS += -U eeprom:w:$(KEY_EEP):i
endif

.PHONY: bootloader-eeprom-check
bootloader-eeprom-check:
	@test "$(BOOTLOADER_EEPROM)" = yes || { \
	  echo "upload KEY_FILE=: the Uno's stock bootloader (Optiboot 4.4) cannot write EEPROM and would write the key" \
	       "into flash. With a bootloader that writes EEPROM (Optiboot 8 built with SUPPORT_EEPROM, urboot) add" \
	       "BOOTLOADER_EEPROM=yes; else use an ISP programmer: make ispload ISP_PROG=usbasp ... (README)" >&2; exit 1; }

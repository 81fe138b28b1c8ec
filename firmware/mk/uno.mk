# Shared arduino-mk setup for every sketch, included by firmware/<sketch>/Makefile after it sets SKETCH_SETTINGS
# (numeric -D settings) and SKETCH_STRING_SETTINGS (quoted ones). Debian packages: arduino-mk, arduino-core-avr,
# gcc-avr, avr-libc, avrdude (make -C firmware setup).
#   make                          build for the Uno into firmware/build/<sketch>/
#   make upload PORT=/dev/ttyUSB0 flash with avrdude
#   make NODE_ID=3 ...            any setting listed by the sketch's Makefile; defaults are in its config header
FIRMWARE_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
SKETCH_NAME := $(notdir $(CURDIR))

ARDUINO_DIR = /usr/share/arduino
ARDMK_DIR = /usr/share/arduino
AVR_TOOLS_DIR = /usr
BOARD_TAG = uno
ARDUINO_SKETCHBOOK = $(FIRMWARE_DIR)/build/sketchbook  # keeps arduino-mk from reading ~/.arduino preferences
MONITOR_BAUDRATE = 115200
AVRDUDE_CONF = /etc/avrdude.conf  # Debian path; arduino-mk would look under $(AVR_TOOLS_DIR)/etc
ifdef PORT
MONITOR_PORT = $(PORT)
endif

# Libraries: RF24 (fetched, sha256-checked) and this folder's own library, seen through a symlink so arduino-mk
# treats firmware/ like any installed library (library.properties + src/).
USER_LIB_PATH = $(FIRMWARE_DIR)/lib-vendor
ARDUINO_LIBS ?= TelemetryNode
ifneq ($(filter RF24,$(ARDUINO_LIBS)),)
ifeq ($(wildcard $(USER_LIB_PATH)/RF24/.sdist-sha256),)
$(info RF24 is missing; fetching it (make -C firmware setup does the same))
$(shell $(FIRMWARE_DIR)/scripts/fetch-rf24 >&2)
endif
endif
$(shell mkdir -p $(USER_LIB_PATH) && ln -sfn .. $(USER_LIB_PATH)/TelemetryNode)

# Debian's core 1.8.7 with gcc-avr 5.4 lacks DECIMAL_DIG in C++.
CXXFLAGS += -DDECIMAL_DIG=__DECIMAL_DIG__
CXXFLAGS_STD = -std=gnu++11 -fno-threadsafe-statics -flto
TARGET = $(SKETCH_NAME)

# Build-time settings given on the command line become -D flags. Each combination builds in a folder of its own,
# build/<sketch>-<SETTING><value>... (e.g. build/sensor_node-NODE_ID3-SAMPLE_SECONDS5/), so node variants live side
# by side (scripts/radio-sim runs six at once); without settings the build goes to build/<sketch>/.
SETTING_FLAGS := $(foreach s,$(SKETCH_SETTINGS),$(if $($(s)),-D$(s)=$($(s)))) \
                 $(foreach s,$(SKETCH_STRING_SETTINGS),$(if $($(s)),-D$(s)='"$($(s))"'))
CPPFLAGS += $(SETTING_FLAGS)
SETTINGS_SUFFIX := $(subst $(eval) ,,$(foreach s,$(SKETCH_SETTINGS) $(SKETCH_STRING_SETTINGS),$(if $($(s)),-$(s)$(subst /,_,$(subst $(eval) ,_,$($(s)))))))
OBJDIR = $(FIRMWARE_DIR)/build/$(SKETCH_NAME)$(SETTINGS_SUFFIX)

# `make -s elf-path` prints the path alone, without Arduino.mk's configuration listing.
ifeq ($(MAKECMDGOALS),elf-path)
ARDUINO_QUIET = 1
endif
include $(ARDMK_DIR)/Arduino.mk

# `make -s elf-path NODE_ID=3` prints where that variant's ELF is (scripts/radio-sim asks rather than guesses).
.PHONY: elf-path
elf-path:
	@echo $(OBJDIR)/$(TARGET).elf

// An nRF24L01+ attached to one simulated board: the SPI command set and registers (nrf24_spi.c) and the radio's
// states, FIFOs, auto-ack and retransmits (nrf24_radio.c). Section numbers refer to the nRF24L01+ Product
// Specification v1.0.
#pragma once

#include <stdint.h>

#include "air.h"
#include "nrf24_regs.h"
#include "sim_time.h"

struct board;

enum nrf24_state {
  NRF_POWER_DOWN, NRF_STARTING, NRF_STANDBY_I, NRF_STANDBY_II, NRF_RX_SETTLING, NRF_RX,
  NRF_TX_SETTLING, NRF_TX, NRF_ACK_WAIT, NRF_ACK_TX,
};

enum nrf24_event { EV_STARTED, EV_SETTLED, EV_TX_END, EV_ACK_DEADLINE, EV_RX_END, EV_ACK_START, EV_ACK_END };

#define NRF_MAX_EVENTS 24

typedef struct {
  uint8_t len, pipe, no_ack;
  uint8_t data[NRF_MAX_PAYLOAD];
} nrf24_fifo_entry_t;

typedef struct nrf24 {
  struct board* board;
  air_t* air;
  int node;          // board number (0 = base station) for the trace and the scripted faults
  int attached;      // 0: the chip is missing, the SPI bus reads nothing back
  uint8_t ce, csn;

  // SPI transaction in progress (from CSN low to CSN high)
  uint8_t cmd;
  int index;         // data bytes shifted so far after the command byte
  uint8_t buf[NRF_MAX_PAYLOAD];

  uint8_t reg[NRF_REG_COUNT];
  uint8_t rx_addr_p0[5], rx_addr_p1[5], tx_addr[5];
  nrf24_fifo_entry_t rx_fifo[NRF_FIFO_DEPTH], tx_fifo[NRF_FIFO_DEPTH];
  int rx_count, tx_count;

  int state;
  ticks_t state_since;
  uint8_t pid, arc_cnt, plos_cnt;
  int tx_is_retransmit;    // the TX FIFO head went out at least once
  uint32_t packets_loaded; // packet numbers for scripted faults
  uint32_t current_number;
  uint32_t current_id;     // the data packet on the air or awaiting its ACK
  int have_last;           // PID and CRC of the last packet taken, for duplicate detection (7.4.2)
  uint8_t last_pid;
  uint16_t last_crc;
  packet_t ack;            // PRX: the ACK to send once the radio has turned around

  struct {
    ticks_t t;
    int kind;
    uint32_t arg;
  } events[NRF_MAX_EVENTS];
  int event_count;

  ticks_t powered_ticks;   // time spent out of power-down, for tests of sleeping nodes
  ticks_t powered_since;
} nrf24_t;

void nrf24_init(nrf24_t* r, struct board* board, air_t* air, int node);
void nrf24_power_on_reset(nrf24_t* r);

// Wiring (called by board.c from simavr's IRQs).
uint8_t nrf24_spi_byte(nrf24_t* r, uint8_t mosi);
void nrf24_csn(nrf24_t* r, int level);
void nrf24_ce(nrf24_t* r, int level);

// nrf24_radio.c
void nrf24_update_mode(nrf24_t* r);      // after CONFIG, CE or the TX FIFO changed
void nrf24_run_events(nrf24_t* r);       // the board's clock reached the earliest event
void nrf24_schedule(nrf24_t* r, ticks_t t, int kind, uint32_t arg);
int nrf24_listening(const nrf24_t* r);   // could take a packet that starts now
uint16_t nrf24_rate_kbps(const nrf24_t* r);
int nrf24_crc_bytes(const nrf24_t* r);
int nrf24_address_width(const nrf24_t* r);
ticks_t nrf24_powered_ticks(const nrf24_t* r);

// The air between the radios: every packet on it with its start and end time, so receivers can tell whether it
// reached them (channel, data rate, CRC length, address), whether another packet overlapped it (a collision), and
// which seeded fault it met. Also the run's counters and the JSON-lines trace.
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "faults.h"
#include "sim_time.h"

struct nrf24;

enum packet_kind { PKT_DATA, PKT_ACK };
enum packet_fault { FAULT_NONE, FAULT_LOSS, FAULT_CORRUPT, FAULT_SCRIPTED };
enum packet_attack { ATTACK_NONE, ATTACK_FORGE, ATTACK_REPLAY };  // what an attacker's packet is (attack.h)

#define ATTACKER_BOARD 99  // the sender number of an attacker's packets ("attacker" in the trace)

#define AIR_MAX_RESULTS 8

typedef struct packet {
  uint32_t id;
  int kind;
  int node;             // sender's board number (0 = base station)
  int peer;             // ack: the board whose packet it acknowledges
  uint8_t channel, crc_bytes, aw, pid, no_ack, dpl, len;
  uint16_t rate_kbps;
  uint8_t addr[5];      // LSByte first, as written over SPI
  uint8_t data[32];
  ticks_t start, end;
  uint32_t number;      // data: the sender's packet number; ack: the number of the packet it acknowledges
  int attempt;          // data: 0 for the first transmission; ack: the attempt it acknowledges
  uint32_t ack_of;      // ack: id of the data packet
  int fault;
  int attack;           // ATTACK_NONE for a board's own packet
  int collided;         // another packet overlapped it on its channel (both are lost: no capture effect)
  int evaluated;        // a receiver has decided about it (nothing may overlap it later)
  int acked;            // ack: its PTX took it
  int result_count;
  struct {
    int node;
    const char* what;   // delivered, dup_dropped, rx_full, collision, lost, crc_error, ...
  } results[AIR_MAX_RESULTS];
} packet_t;

typedef struct {
  uint64_t delivered, lost, dup_dropped, acks_lost, collisions, max_rt;
  uint64_t forged, replayed;  // attack packets a radio put into its RX FIFO
} air_stats_t;

typedef struct air {
  faults_t faults;
  rng_t rng;
  FILE* trace;
  packet_t* packets;    // on the air or recently so, oldest first
  int count, capacity;
  uint32_t next_id;
  struct nrf24* radios[8];
  int radio_count;
  air_stats_t stats;
  void (*on_finish)(void* ctx, const packet_t* p);  // every packet once its receivers are done with it
  void* on_finish_ctx;
} air_t;

void air_init(air_t* air, const faults_t* faults, FILE* trace);
void air_free(air_t* air);
void air_attach(air_t* air, struct nrf24* radio);

// Puts a packet on the air from p's fields (start, end, addressing, payload); picks its fault, tells every
// listening radio to look at it when it ends, and returns its id.
uint32_t air_transmit(air_t* air, const packet_t* p);
packet_t* air_find(air_t* air, uint32_t id);
ticks_t packet_air_ticks(const packet_t* p);  // from p's address width, CRC length, data rate and length
int air_busy(const air_t* air, uint8_t channel, ticks_t start, ticks_t end);  // a packet overlaps [start, end)
void air_result(packet_t* p, int node, const char* what);
int packet_has_result(const packet_t* p, const char* what);  // some radio made `what` of it

// Forgets packets that ended well before `before` (every board is past them and their ACKs), writing their trace
// lines.
void air_prune(air_t* air, ticks_t before);
void air_trace_line(air_t* air, ticks_t t, int node, const char* line);  // a board's UART line, for the trace

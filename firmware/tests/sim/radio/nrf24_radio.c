// The nRF24L01+ radio side: the operational modes of 6.1 (figure 4), Enhanced ShockBurst transmit with auto-ack
// and auto-retransmit (7.4-7.6), and receive with pipes, duplicate detection and the 3-deep RX FIFO (7.3, 7.5).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "nrf24.h"

#define T_POWER_UP US(1500)  // 6.1.7 table 16, Tpd2stby with a crystal: 1.5 ms (a high-Ls crystal takes longer)
#define T_SETTLE US(130)     // 6.1.7 table 16, Tstby2a: standby to TX or RX mode

static ticks_t now(const nrf24_t* r) { return board_now(r->board); }

static void set_state(nrf24_t* r, int state) {
  if (state == r->state) return;
  ticks_t t = now(r);
  if (r->state == NRF_POWER_DOWN) r->powered_since = t;
  if (state == NRF_POWER_DOWN) r->powered_ticks += t - r->powered_since;
  r->state = state;
  r->state_since = t;
}

ticks_t nrf24_powered_ticks(const nrf24_t* r) {
  return r->powered_ticks + (r->state == NRF_POWER_DOWN ? 0 : now(r) - r->powered_since);
}

// 9.1 RF_SETUP: RF_DR_LOW selects 250 kbps and wins over RF_DR_HIGH (that pair is "reserved"; taken as 250).
uint16_t nrf24_rate_kbps(const nrf24_t* r) {
  uint8_t rf = r->reg[NRF_RF_SETUP];
  if (rf & RF_DR_LOW) return 250;
  return rf & RF_DR_HIGH ? 2000 : 1000;
}

// 9.1 CONFIG: "EN_CRC is forced high if one of the bits in the EN_AA is high".
int nrf24_crc_bytes(const nrf24_t* r) {
  uint8_t cfg = r->reg[NRF_CONFIG];
  if (!(cfg & CFG_EN_CRC) && !r->reg[NRF_EN_AA]) return 0;
  return cfg & CFG_CRCO ? 2 : 1;
}

int nrf24_address_width(const nrf24_t* r) {
  int aw = r->reg[NRF_SETUP_AW] & 3;
  return aw ? aw + 2 : 0;  // '00' is illegal: such a radio matches nothing
}

int nrf24_listening(const nrf24_t* r) { return r->attached && (r->state == NRF_RX || r->state == NRF_ACK_WAIT); }

static void arm(nrf24_t* r) {
  if (!r->event_count) return;
  ticks_t first = r->events[0].t;
  for (int i = 1; i < r->event_count; ++i) {
    if (r->events[i].t < first) first = r->events[i].t;
  }
  board_wake_radio_at(r->board, first);
}

void nrf24_schedule(nrf24_t* r, ticks_t t, int kind, uint32_t arg) {
  if (t < now(r)) {
    fprintf(stderr, "radio-sim: a radio event at %llu ticks lands in board %d's past (%llu)\n",
            (unsigned long long)t, r->node, (unsigned long long)now(r));
    abort();
  }
  if (r->event_count == NRF_MAX_EVENTS) {
    fprintf(stderr, "radio-sim: board %d has too many radio events pending\n", r->node);
    abort();
  }
  r->events[r->event_count].t = t;
  r->events[r->event_count].kind = kind;
  r->events[r->event_count].arg = arg;
  ++r->event_count;
  arm(r);
}

static void cancel(nrf24_t* r, int kind) {
  int kept = 0;
  for (int i = 0; i < r->event_count; ++i) {
    if (r->events[i].kind != kind) r->events[kept++] = r->events[i];
  }
  r->event_count = kept;
}

static void start_tx(nrf24_t* r) {
  nrf24_fifo_entry_t* e = &r->tx_fifo[0];
  if (!r->tx_is_retransmit) {  // a new payload: 7.3.3.2 PID + 1, 9.1 OBSERVE_TX ARC_CNT reset
    r->pid = (uint8_t)((r->pid + 1) & 3);
    r->arc_cnt = 0;
    r->current_number = r->packets_loaded++;
    r->tx_is_retransmit = 1;
  }
  packet_t p = {.kind = PKT_DATA, .node = r->node, .channel = r->reg[NRF_RF_CH],
                .crc_bytes = (uint8_t)nrf24_crc_bytes(r), .aw = (uint8_t)nrf24_address_width(r), .pid = r->pid,
                .no_ack = e->no_ack, .len = e->len, .rate_kbps = nrf24_rate_kbps(r),
                .number = r->current_number, .attempt = r->arc_cnt};
  // 7.3.3.1: the length field is used only with dynamic payloads, which the PTX needs DPL_P0 and EN_DPL for.
  p.dpl = (r->reg[NRF_FEATURE] & FEAT_EN_DPL) && (r->reg[NRF_DYNPD] & 1);
  memcpy(p.addr, r->tx_addr, 5);
  memcpy(p.data, e->data, e->len);
  p.start = now(r);
  p.end = p.start + packet_air_ticks(&p);
  set_state(r, NRF_TX);
  r->current_id = air_transmit(r->air, &p);
  nrf24_schedule(r, p.end, EV_TX_END, r->current_id);
}

// The payload left the FIFO: acknowledged, or sent without asking for an ACK.
static void tx_done(nrf24_t* r) {
  r->reg[NRF_STATUS] |= ST_TX_DS;
  memmove(r->tx_fifo, r->tx_fifo + 1, sizeof r->tx_fifo[0] * (size_t)--r->tx_count);
  r->tx_is_retransmit = 0;
  set_state(r, NRF_STANDBY_I);
  nrf24_update_mode(r);
}

// 6.1.5 / figure 4: from standby, CE and PRIM_RX pick RX or TX (after the 130 us settle); a packet in flight,
// its ACK wait and its retransmits finish first whatever CE does.
void nrf24_update_mode(nrf24_t* r) {
  if (!r->attached) return;
  uint8_t cfg = r->reg[NRF_CONFIG];
  if (!(cfg & CFG_PWR_UP)) {
    for (int kind = EV_STARTED; kind <= EV_ACK_END; ++kind) {
      if (kind != EV_RX_END) cancel(r, kind);
    }
    set_state(r, NRF_POWER_DOWN);
    return;
  }
  switch (r->state) {
    case NRF_POWER_DOWN:
      set_state(r, NRF_STARTING);
      nrf24_schedule(r, now(r) + T_POWER_UP, EV_STARTED, 0);
      return;
    case NRF_RX_SETTLING:
    case NRF_RX:
      if (r->ce && (cfg & CFG_PRIM_RX)) return;
      cancel(r, EV_SETTLED);
      set_state(r, NRF_STANDBY_I);
      break;
    case NRF_STANDBY_I:
    case NRF_STANDBY_II:
      break;
    default:
      return;  // starting up, or a transmission (with its ACK) under way
  }
  if (!r->ce) {
    set_state(r, NRF_STANDBY_I);
  } else if (cfg & CFG_PRIM_RX) {
    set_state(r, NRF_RX_SETTLING);
    nrf24_schedule(r, now(r) + T_SETTLE, EV_SETTLED, 0);
  } else if (r->tx_count && !(r->reg[NRF_STATUS] & ST_MAX_RT)) {  // 9.1 STATUS: MAX_RT must be cleared first
    set_state(r, NRF_TX_SETTLING);
    nrf24_schedule(r, now(r) + T_SETTLE, EV_SETTLED, 0);
  } else {
    set_state(r, NRF_STANDBY_II);
  }
}

void nrf24_ce(nrf24_t* r, int level) {
  level = level != 0;
  if (level == r->ce) return;
  r->ce = (uint8_t)level;
  nrf24_update_mode(r);
}

static int match_pipe(const nrf24_t* r, const packet_t* p) {
  int aw = nrf24_address_width(r);
  if (!aw || p->aw != aw) return -1;
  for (int pipe = 0; pipe < 6; ++pipe) {
    if (!(r->reg[NRF_EN_RXADDR] >> pipe & 1)) continue;
    // 7.6 (MultiCeiver): pipes 2-5 have their own LSByte and share bytes 1-4 with pipe 1.
    const uint8_t* base = pipe == 0 ? r->rx_addr_p0 : r->rx_addr_p1;
    if (pipe >= 2 && p->addr[0] != r->reg[NRF_RX_ADDR_P0 + pipe]) continue;
    if (memcmp(p->addr + (pipe >= 2), base + (pipe >= 2), (size_t)(aw - (pipe >= 2)))) continue;
    return pipe;
  }
  return -1;
}

// 7.3.5: CRC-16 (x^16 + x^12 + x^5 + 1, initial 0xFFFF) over address, packet control field and payload.
static uint16_t packet_crc(const packet_t* p) {
  uint8_t bytes[5 + 2 + 32];
  memcpy(bytes, p->addr, p->aw);
  bytes[p->aw] = (uint8_t)(p->len << 2 | p->pid);
  bytes[p->aw + 1] = p->no_ack;
  memcpy(bytes + p->aw + 2, p->data, p->len);
  uint16_t crc = 0xFFFF;
  for (int i = 0; i < p->aw + 2 + p->len; ++i) {
    crc ^= (uint16_t)(bytes[i] << 8);
    for (int b = 0; b < 8; ++b) crc = (uint16_t)(crc & 0x8000 ? crc << 1 ^ 0x1021 : crc << 1);
  }
  return crc;
}

static void send_ack(nrf24_t* r, const packet_t* p) {
  packet_t ack = {.kind = PKT_ACK, .node = r->node, .peer = p->node, .channel = p->channel, .crc_bytes = p->crc_bytes,
                  .aw = p->aw, .pid = p->pid, .rate_kbps = p->rate_kbps, .number = p->number,
                  .attempt = p->attempt, .ack_of = p->id};
  memcpy(ack.addr, p->addr, 5);
  r->ack = ack;
  set_state(r, NRF_ACK_TX);  // deaf from here until the ACK is out and RX has settled again
  nrf24_schedule(r, p->end + T_SETTLE, EV_ACK_START, p->id);
}

// Why a packet heard on this radio's channel does not reach its RX FIFO, or NULL when it does.
static const char* reception_fault(nrf24_t* r, packet_t* p) {
  if (p->collided) return "collision";
  if (p->fault == FAULT_LOSS || p->fault == FAULT_SCRIPTED) return "lost";
  if (p->crc_bytes != nrf24_crc_bytes(r)) return "crc_error";
  if (p->fault == FAULT_CORRUPT) {
    if (p->crc_bytes) return "crc_error";
    p->data[0] ^= 0x5A;  // no CRC: the damage goes through
  }
  return NULL;
}

static void receive_ack(nrf24_t* r, packet_t* p) {
  int aw = nrf24_address_width(r);
  // 7.4.1/7.4.2: the PTX takes the ACK on pipe 0, whose address must equal TX_ADDR; the ACK carries the PID.
  if (r->state != NRF_ACK_WAIT || !(r->reg[NRF_EN_RXADDR] & 1) || p->aw != aw ||
      memcmp(p->addr, r->rx_addr_p0, (size_t)aw) || p->pid != r->pid) {
    return;
  }
  const char* fault = reception_fault(r, p);
  air_result(p, r->node, fault ? fault : "acked");
  if (fault) return;
  p->acked = 1;
  cancel(r, EV_ACK_DEADLINE);
  tx_done(r);
}

static void receive(nrf24_t* r, uint32_t id) {
  packet_t* p = air_find(r->air, id);
  if (!p) return;
  p->evaluated = 1;
  if (p->channel != r->reg[NRF_RF_CH] || p->rate_kbps != nrf24_rate_kbps(r)) return;
  if (p->kind == PKT_ACK) return receive_ack(r, p);
  if (r->state != NRF_RX || r->state_since > p->start) return;  // must hear the packet from its preamble
  int pipe = match_pipe(r, p);
  if (pipe < 0) return;
  const char* fault = reception_fault(r, p);
  if (fault) return air_result(p, r->node, fault);
  // 7.3.3.1: a static-length pipe reads RX_PW_Px bytes and no length field; a mismatch fails the CRC.
  int dynamic = (r->reg[NRF_FEATURE] & FEAT_EN_DPL) && (r->reg[NRF_DYNPD] >> pipe & 1);
  uint8_t width = r->reg[NRF_RX_PW_P0 + pipe];
  if (dynamic != p->dpl || (!dynamic && (width == 0 || width != p->len))) return air_result(p, r->node, "crc_error");
  int ack = (r->reg[NRF_EN_AA] >> pipe & 1) && !p->no_ack;
  uint16_t crc = packet_crc(p);
  // 7.3.3.2: same PID and same CRC as the previous packet (whatever its pipe) is a retransmission: dropped, but
  // acknowledged, because its PTX evidently missed the first ACK.
  if (r->have_last && r->last_pid == p->pid && r->last_crc == crc) {
    air_result(p, r->node, "dup_dropped");
    ++r->air->stats.dup_dropped;
    if (ack) send_ack(r, p);
    return;
  }
  if (r->rx_count == NRF_FIFO_DEPTH) return air_result(p, r->node, "rx_full");  // 7.5.2: no room, no ACK
  nrf24_fifo_entry_t* e = &r->rx_fifo[r->rx_count++];
  e->len = p->len;
  e->pipe = (uint8_t)pipe;
  memcpy(e->data, p->data, p->len);
  r->reg[NRF_STATUS] |= ST_RX_DR;
  r->have_last = 1;
  r->last_pid = p->pid;
  r->last_crc = crc;
  air_result(p, r->node, "delivered");
  ++r->air->stats.delivered;
  if (ack) send_ack(r, p);
}

static void start_ack(nrf24_t* r) {
  r->ack.start = now(r);
  r->ack.end = r->ack.start + packet_air_ticks(&r->ack);
  air_transmit(r->air, &r->ack);
  nrf24_schedule(r, r->ack.end, EV_ACK_END, 0);
}

static void ack_deadline(nrf24_t* r) {
  if (r->arc_cnt < (r->reg[NRF_SETUP_RETR] & 0x0F)) {
    ++r->arc_cnt;
    start_tx(r);  // ARD counts from the end of one transmission to the start of the next (9.1 SETUP_RETR)
    return;
  }
  r->reg[NRF_STATUS] |= ST_MAX_RT;  // 7.4.2: the payload stays in the TX FIFO
  if (r->plos_cnt < 15) ++r->plos_cnt;
  ++r->air->stats.max_rt;
  set_state(r, NRF_STANDBY_I);
  nrf24_update_mode(r);
}

static void handle(nrf24_t* r, int kind, uint32_t arg) {
  switch (kind) {
    case EV_STARTED:
      set_state(r, NRF_STANDBY_I);
      nrf24_update_mode(r);
      break;
    case EV_SETTLED:
      if (r->state == NRF_RX_SETTLING) set_state(r, NRF_RX);
      if (r->state == NRF_TX_SETTLING) start_tx(r);
      break;
    case EV_TX_END:
      if ((r->reg[NRF_EN_AA] & 1) && !r->tx_fifo[0].no_ack) {
        set_state(r, NRF_ACK_WAIT);
        ticks_t ard = US(250) * (ticks_t)((r->reg[NRF_SETUP_RETR] >> 4) + 1);
        nrf24_schedule(r, now(r) + ard, EV_ACK_DEADLINE, 0);
      } else {
        tx_done(r);
      }
      break;
    case EV_ACK_DEADLINE: ack_deadline(r); break;
    case EV_RX_END: receive(r, arg); break;
    case EV_ACK_START: start_ack(r); break;
    case EV_ACK_END:
      set_state(r, NRF_STANDBY_I);
      nrf24_update_mode(r);
      break;
  }
}

void nrf24_run_events(nrf24_t* r) {
  for (;;) {
    int first = -1;
    for (int i = 0; i < r->event_count; ++i) {
      if (r->events[i].t <= now(r) && (first < 0 || r->events[i].t < r->events[first].t)) first = i;
    }
    if (first < 0) break;
    int kind = r->events[first].kind;
    uint32_t arg = r->events[first].arg;
    r->events[first] = r->events[--r->event_count];
    if (r->attached) handle(r, kind, arg);
  }
  arm(r);
}

void nrf24_init(nrf24_t* r, struct board* board, air_t* air, int node) {
  memset(r, 0, sizeof *r);
  r->board = board;
  r->air = air;
  r->node = node;
  r->csn = 1;
  nrf24_power_on_reset(r);
}

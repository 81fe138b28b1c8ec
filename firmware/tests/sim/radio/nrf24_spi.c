// The nRF24L01+ SPI side: commands (8.3.1, table 20) and registers (9.1). A transaction runs from CSN low to CSN
// high; STATUS is shifted out while the command byte shifts in (8.3.1: "the STATUS register is shifted serially
// out on the MISO pin" with the command).
#include <string.h>

#include "nrf24.h"

// Reset values of 9.1's register map.
void nrf24_power_on_reset(nrf24_t* r) {
  memset(r->reg, 0, sizeof r->reg);
  r->reg[NRF_CONFIG] = CFG_EN_CRC;
  r->reg[NRF_EN_AA] = 0x3F;
  r->reg[NRF_EN_RXADDR] = 0x03;
  r->reg[NRF_SETUP_AW] = 0x03;
  r->reg[NRF_SETUP_RETR] = 0x03;
  r->reg[NRF_RF_CH] = 0x02;
  r->reg[NRF_RF_SETUP] = 0x0E;
  r->reg[NRF_STATUS] = 0x0E;
  static const uint8_t p2_to_p5[] = {0xC3, 0xC4, 0xC5, 0xC6};
  memcpy(&r->reg[NRF_RX_ADDR_P2], p2_to_p5, sizeof p2_to_p5);
  memset(r->rx_addr_p0, 0xE7, 5);
  memset(r->rx_addr_p1, 0xC2, 5);
  memset(r->tx_addr, 0xE7, 5);
  r->rx_count = r->tx_count = 0;
  r->pid = 0;
  r->arc_cnt = r->plos_cnt = 0;
  r->tx_is_retransmit = 0;
  r->have_last = 0;
  r->state = NRF_POWER_DOWN;
  r->event_count = 0;
}

static uint8_t status(const nrf24_t* r) {
  uint8_t s = r->reg[NRF_STATUS] & (ST_RX_DR | ST_TX_DS | ST_MAX_RT);
  s |= (uint8_t)((r->rx_count ? r->rx_fifo[0].pipe : 7) << 1);
  if (r->tx_count == NRF_FIFO_DEPTH) s |= ST_TX_FULL;
  return s;
}

static uint8_t fifo_status(const nrf24_t* r) {
  uint8_t s = 0;
  if (r->rx_count == 0) s |= FIFO_RX_EMPTY;
  if (r->rx_count == NRF_FIFO_DEPTH) s |= FIFO_RX_FULL;
  if (r->tx_count == 0) s |= FIFO_TX_EMPTY;
  if (r->tx_count == NRF_FIFO_DEPTH) s |= FIFO_TX_FULL;
  return s;
}

static uint8_t* address_register(nrf24_t* r, uint8_t reg) {
  if (reg == NRF_RX_ADDR_P0) return r->rx_addr_p0;
  if (reg == NRF_RX_ADDR_P1) return r->rx_addr_p1;
  if (reg == NRF_TX_ADDR) return r->tx_addr;
  return NULL;
}

static uint8_t read_register(nrf24_t* r, uint8_t reg, int index) {
  uint8_t* addr = address_register(r, reg);
  if (addr) return addr[index % 5];  // LSByte first (8.3.1)
  switch (reg) {
    case NRF_STATUS: return status(r);
    case NRF_FIFO_STATUS: return fifo_status(r);
    case NRF_OBSERVE_TX: return (uint8_t)(r->plos_cnt << 4 | r->arc_cnt);
    default: return reg < NRF_REG_COUNT ? r->reg[reg] : 0;
  }
}

// 8.3.1 allows W_REGISTER in power-down and standby only; RF24 also clears STATUS while listening, which real
// chips accept, so writes are taken in every state.
static void write_register(nrf24_t* r, uint8_t reg, int index, uint8_t v) {
  uint8_t* addr = address_register(r, reg);
  if (addr) {
    if (index < 5) addr[index] = v;
    return;
  }
  if (index > 0 || reg >= NRF_REG_COUNT) return;
  switch (reg) {
    case NRF_STATUS:
      r->reg[NRF_STATUS] &= (uint8_t)~(v & (ST_RX_DR | ST_TX_DS | ST_MAX_RT));
      nrf24_update_mode(r);  // a cleared MAX_RT lets the TX FIFO go out again
      return;
    case NRF_FIFO_STATUS:
    case NRF_OBSERVE_TX:
    case NRF_RPD:
      return;  // read-only
    case NRF_RF_CH:
      r->reg[reg] = v & 0x7F;
      r->plos_cnt = 0;  // 9.1 OBSERVE_TX: PLOS_CNT "is reset by writing to RF_CH"
      return;
    case NRF_CONFIG:
      r->reg[reg] = v & 0x7F;
      nrf24_update_mode(r);
      return;
    default:
      r->reg[reg] = v;
  }
}

void nrf24_csn(nrf24_t* r, int level) {
  level = level != 0;
  if (level == r->csn) return;
  r->csn = (uint8_t)level;
  if (!level) {
    r->index = -1;  // the next byte is a command
    return;
  }
  if (r->index < 0) return;
  // Transaction end: the commands that act on the whole transfer.
  if ((r->cmd == CMD_W_TX_PAYLOAD || r->cmd == CMD_W_TX_PAYLOAD_NOACK) && r->tx_count < NRF_FIFO_DEPTH) {
    nrf24_fifo_entry_t* e = &r->tx_fifo[r->tx_count++];
    e->len = (uint8_t)(r->index > NRF_MAX_PAYLOAD ? NRF_MAX_PAYLOAD : r->index);
    e->no_ack = r->cmd == CMD_W_TX_PAYLOAD_NOACK;
    memcpy(e->data, r->buf, e->len);
    nrf24_update_mode(r);
  } else if (r->cmd == CMD_R_RX_PAYLOAD && r->index > 0 && r->rx_count) {
    memmove(r->rx_fifo, r->rx_fifo + 1, sizeof r->rx_fifo[0] * (size_t)--r->rx_count);  // 8.3.1: deleted once read
  }
}

static void command(nrf24_t* r, uint8_t cmd) {
  r->cmd = cmd;
  r->index = 0;
  if (cmd == CMD_FLUSH_TX) {
    r->tx_count = 0;
    r->tx_is_retransmit = 0;
  } else if (cmd == CMD_FLUSH_RX) {
    r->rx_count = 0;
  }
  // ACTIVATE (0x50) is an nRF24L01 command; the + ignores it, which is how RF24 tells the two apart.
}

static uint8_t data_byte(nrf24_t* r, uint8_t mosi) {
  int i = r->index++;
  uint8_t cmd = r->cmd;
  if (cmd < CMD_W_REGISTER) return read_register(r, cmd & 0x1F, i);
  if (cmd < CMD_ACTIVATE) {
    write_register(r, cmd & 0x1F, i, mosi);
    return 0;
  }
  if (cmd == CMD_R_RX_PL_WID) return r->rx_count ? r->rx_fifo[0].len : 0;
  if (cmd == CMD_R_RX_PAYLOAD) return r->rx_count && i < NRF_MAX_PAYLOAD ? r->rx_fifo[0].data[i] : 0;
  if ((cmd == CMD_W_TX_PAYLOAD || cmd == CMD_W_TX_PAYLOAD_NOACK) && i < NRF_MAX_PAYLOAD) r->buf[i] = mosi;
  return 0;
}

uint8_t nrf24_spi_byte(nrf24_t* r, uint8_t mosi) {
  if (r->csn) return 0xFF;  // not selected: MISO floats
  if (r->index < 0) {
    uint8_t s = status(r);
    command(r, mosi);
    return s;
  }
  return data_byte(r, mosi);
}

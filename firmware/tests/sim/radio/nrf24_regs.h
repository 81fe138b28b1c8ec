// nRF24L01+ register map, commands and reset values: Nordic nRF24L01+ Product Specification v1.0, section 8.3.1
// (table 20, SPI commands) and section 9.1 (register map). Only what RF24 1.5.0 uses with this firmware.
#pragma once

enum {
  NRF_CONFIG = 0x00, NRF_EN_AA = 0x01, NRF_EN_RXADDR = 0x02, NRF_SETUP_AW = 0x03, NRF_SETUP_RETR = 0x04,
  NRF_RF_CH = 0x05, NRF_RF_SETUP = 0x06, NRF_STATUS = 0x07, NRF_OBSERVE_TX = 0x08, NRF_RPD = 0x09,
  NRF_RX_ADDR_P0 = 0x0A, NRF_RX_ADDR_P1 = 0x0B, NRF_RX_ADDR_P2 = 0x0C, NRF_RX_ADDR_P5 = 0x0F,
  NRF_TX_ADDR = 0x10, NRF_RX_PW_P0 = 0x11, NRF_RX_PW_P5 = 0x16, NRF_FIFO_STATUS = 0x17,
  NRF_DYNPD = 0x1C, NRF_FEATURE = 0x1D, NRF_REG_COUNT = 0x1E,
};

enum {  // table 20
  CMD_R_REGISTER = 0x00, CMD_W_REGISTER = 0x20, CMD_ACTIVATE = 0x50, CMD_R_RX_PL_WID = 0x60,
  CMD_R_RX_PAYLOAD = 0x61, CMD_W_TX_PAYLOAD = 0xA0, CMD_W_TX_PAYLOAD_NOACK = 0xB0, CMD_FLUSH_TX = 0xE1,
  CMD_FLUSH_RX = 0xE2, CMD_NOP = 0xFF,
};

// CONFIG
#define CFG_PRIM_RX 0x01
#define CFG_PWR_UP 0x02
#define CFG_CRCO 0x04
#define CFG_EN_CRC 0x08
// STATUS: RX_DR, TX_DS, MAX_RT are write-1-to-clear; RX_P_NO is 0b111 when the RX FIFO is empty
#define ST_RX_DR 0x40
#define ST_TX_DS 0x20
#define ST_MAX_RT 0x10
#define ST_TX_FULL 0x01
// FIFO_STATUS
#define FIFO_RX_EMPTY 0x01
#define FIFO_RX_FULL 0x02
#define FIFO_TX_EMPTY 0x10
#define FIFO_TX_FULL 0x20
// RF_SETUP data rate bits (RF_DR_LOW, RF_DR_HIGH)
#define RF_DR_LOW 0x20
#define RF_DR_HIGH 0x08
// FEATURE
#define FEAT_EN_DPL 0x04
#define FEAT_EN_DYN_ACK 0x01

#define NRF_FIFO_DEPTH 3
#define NRF_MAX_PAYLOAD 32

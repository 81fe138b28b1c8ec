#include <gtest/gtest.h>

#include "telemetry/fixed_point.h"
#include "telemetry/sensor_math.h"

using namespace telemetry;

// R(T) of a 10 kΩ, B = 3950 NTC from R = R0 exp(B (1/T - 1/T0)), computed outside this code.
TEST(SensorMath, NtcBetaReadsNominalAndKnownPoints) {
  EXPECT_NEAR(ntc_celsius_from_ohm(10000.0f, kNtc10k3950), 25.0f, 0.005f);
  EXPECT_NEAR(ntc_celsius_from_ohm(33620.6f, kNtc10k3950), 0.0f, 0.01f);
  EXPECT_NEAR(ntc_celsius_from_ohm(3588.2f, kNtc10k3950), 50.0f, 0.01f);
  EXPECT_NEAR(ntc_celsius_from_ohm(697.5f, kNtc10k3950), 100.0f, 0.02f);
  EXPECT_NEAR(ntc_celsius_from_ohm(105384.7f, kNtc10k3950), -20.0f, 0.02f);
  NtcBeta other = {100000.0f, 25.0f, 4250.0f};  // a 100 kΩ part
  EXPECT_NEAR(ntc_celsius_from_ohm(100000.0f, other), 25.0f, 0.005f);
}

// Steinhart-Hart coefficients fitted (outside this code) to the B = 3950 curve at 0, 25 and 50 °C.
TEST(SensorMath, NtcSteinhartHartReadsItsFitPoints) {
  NtcSteinhartHart sh = {1.022248875e-03f, 2.531700487e-04f, -1.889218710e-11f};
  EXPECT_NEAR(ntc_celsius_from_ohm(10000.0f, sh), 25.0f, 0.02f);
  EXPECT_NEAR(ntc_celsius_from_ohm(33620.6f, sh), 0.0f, 0.02f);
  EXPECT_NEAR(ntc_celsius_from_ohm(3588.2f, sh), 50.0f, 0.02f);
}

TEST(SensorMath, DividerResistanceBothWays) {
  float ohm = 0;
  ASSERT_TRUE(divider_sensor_ohm(341, kDivider10kToGround, ohm));  // 341 / (1023 - 341) = 1/2
  EXPECT_NEAR(ohm, 5000.0f, 0.01f);
  Divider high_side = {10000.0f, false};
  ASSERT_TRUE(divider_sensor_ohm(341, high_side, ohm));
  EXPECT_NEAR(ohm, 20000.0f, 0.01f);
  EXPECT_FALSE(divider_sensor_ohm(0, kDivider10kToGround, ohm));     // shorted sensor
  EXPECT_FALSE(divider_sensor_ohm(1023, kDivider10kToGround, ohm));  // open sensor
}

TEST(SensorMath, NtcFromAdcLeavesOutImpossibleReadings) {
  float c = -99;
  ASSERT_TRUE(ntc_celsius(682, Divider{5000.0f, true}, kNtc10k3950, c));  // 5 kΩ x 682/341 = 10 kΩ
  EXPECT_NEAR(c, 25.0f, 0.01f);
  EXPECT_FALSE(ntc_celsius(0, kDivider10kToGround, kNtc10k3950, c));
  EXPECT_FALSE(ntc_celsius(1023, kDivider10kToGround, kNtc10k3950, c));
  EXPECT_FALSE(ntc_celsius(1, kDivider10kToGround, kNtc10k3950, c));     // ~10 Ω: far above 125 °C
  EXPECT_FALSE(ntc_celsius(1022, kDivider10kToGround, kNtc10k3950, c));  // ~10 MΩ: far below -55 °C
}

TEST(SensorMath, LightPercent) {
  EXPECT_EQ(light_percent(0, true), 0);
  EXPECT_EQ(light_percent(1023, true), 100);
  EXPECT_EQ(light_percent(512, true), 50);
  EXPECT_EQ(light_percent(614, true), 60);
  EXPECT_EQ(light_percent(0, false), 100);
  EXPECT_EQ(light_percent(1023, false), 0);
  EXPECT_EQ(light_percent(5000, true), 100);  // clamps out-of-range counts
}

TEST(SensorMath, SupplyFromBandgap) {
  EXPECT_EQ(supply_millivolts(225), 5001);  // 1100 x 1023 / 225
  EXPECT_EQ(supply_millivolts(341), 3300);
  EXPECT_EQ(supply_millivolts(1023), 1100);
  EXPECT_EQ(supply_millivolts(341, 1080), 3240);  // a calibrated chip
  EXPECT_EQ(supply_millivolts(0), 0);
}

TEST(SensorMath, HumidityRatiometric) {
  float rh = -1;
  ASSERT_TRUE(humidity_percent(481, 25.0f, rh));  // Vout/Vs = 0.47 -> 50 %RH at 25 °C
  EXPECT_NEAR(rh, 50.0f, 0.2f);
  ASSERT_TRUE(humidity_percent(481, 5.0f, rh));  // datasheet correction RH / (1.0546 - 0.00216 T): 50.03 / 1.0438
  EXPECT_NEAR(rh, 47.93f, 0.05f);
  ASSERT_TRUE(humidity_percent(164, 25.0f, rh));
  EXPECT_NEAR(rh, 0.0f, 0.2f);
  EXPECT_FALSE(humidity_percent(0, 25.0f, rh));     // disconnected
  EXPECT_FALSE(humidity_percent(1023, 25.0f, rh));  // shorted to supply
}

TEST(FixedPoint, RoundsHalfAwayFromZero) {
  EXPECT_EQ(fixed_from_float(11.774f, 2).scaled, 1177);
  EXPECT_EQ(fixed_from_float(11.776f, 2).scaled, 1178);
  EXPECT_EQ(fixed_from_float(-2.496f, 2).scaled, -250);
  EXPECT_EQ(fixed_from_float(0.0f, 3).scaled, 0);
  EXPECT_EQ(fixed_from_float(3.291f, 3).decimals, 3);
  EXPECT_EQ(fixed_from_float(1e12f, 0).scaled, INT32_MAX);
  EXPECT_EQ(fixed_from_float(-1e12f, 0).scaled, INT32_MIN);
}

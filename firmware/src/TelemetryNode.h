// Umbrella header of the TelemetryNode library: everything that is not pin I/O.
#pragma once

#include "telemetry/crc16_ccitt.h"
#include "telemetry/fixed_point.h"
#include "telemetry/frame_encoder.h"
#include "telemetry/message_counter.h"
#include "telemetry/metric_ids.h"
#include "telemetry/payload_to_frame.h"
#include "telemetry/radio_link.h"
#include "telemetry/radio_payload.h"
#include "telemetry/sensor_math.h"
#include "telemetry/signed_payload.h"
#include "telemetry/signed_line.h"

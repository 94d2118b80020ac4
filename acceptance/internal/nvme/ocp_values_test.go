package nvme

// autovalC0 is the C0 log of fixtures/nvme/ocp-smart-add-log-autoval-ssd.json
// (a real drive's), field by field.
var autovalC0 = OCPSmart{
	PhysicalMediaWritten: Uint128{Lo: 39074645999616}, PhysicalMediaRead: Uint128{Lo: 36265469677568},
	BadUserNANDNormalized: 100, BadSystemNANDNormalized: 100, SoftECCErrors: 1117, RefreshCount: 520628,
	MaxEraseCount: 45, MinEraseCount: 16, PercentFreeBlocks: 1, CapacitorHealth: 100,
	SecurityVersion: 65537, PLPStartCount: Uint128{Lo: 287}, EnduranceEstimate: Uint128{Lo: 20100000},
	LogPageVersion: 2, GUID: "0x" + OCPSmartGUID,
}

// wornC0 is a drive that grew bad blocks and errors, its media counter
// past 2^64 bytes, with log page version 3 (the errata fields printed).
var wornC0 = OCPSmart{
	PhysicalMediaWritten: Uint128{Hi: 1, Lo: 5}, PhysicalMediaRead: Uint128{Lo: 36265469677568},
	BadUserNANDBlocks: 3, BadUserNANDNormalized: 99, BadSystemNANDBlocks: 1, BadSystemNANDNormalized: 99,
	XORRecoveries: 2, UncorrectableReads: 4, SoftECCErrors: 1117, EndToEndCorrected: 1, EndToEndDetected: 2,
	RefreshCount: 520628, MaxEraseCount: 45, MinEraseCount: 16, ThermalThrottlingEvents: 7, ThrottlingStatus: 1,
	PCIeCorrectableErrors: 9, IncompleteShutdowns: 1, PercentFreeBlocks: 1, CapacitorHealth: 40,
	SecurityVersion: 65537, PLPStartCount: Uint128{Lo: 288}, EnduranceEstimate: Uint128{Lo: 20100000},
	LogPageVersion: 3, GUID: "0x" + OCPSmartGUID, NVMeErrataVersion: 4,
}

// activeC3 is an enabled latency monitor with counts in its buckets.
var activeC3 = OCPLatency{FeatureStatus: 1, Active: [4]LatencyBucket{{Read: 9000, Write: 4000, Trim: 1}, {Read: 90, Write: 40}, {Read: 2, Write: 1}, {}}}

// detectedC0 is the autoval drive having detected 5 end-to-end errors it
// could not correct, and corrected none.
var detectedC0 = func() OCPSmart { o := autovalC0; o.EndToEndDetected = 5; return o }()

// unreportedC0 is the autoval drive reporting Bad system nand blocks as
// all ones in their 48 bits, "not valid", as a KIOXIA CD8 does.
var unreportedC0 = func() OCPSmart { o := autovalC0; o.BadSystemNANDBlocks = 0xFFFFFFFFFFFF; return o }()

// readWriteTrimC3 is an enabled latency monitor whose bucket 0 counted
// 1,000 reads, 200 writes and 3 trims.
var readWriteTrimC3 = OCPLatency{FeatureStatus: 1, Active: [4]LatencyBucket{{Read: 1000, Write: 200, Trim: 3}}}

// printedBefore25 is what nvme-cli before 2.5 lets be read of l: no Read
// counts.
func printedBefore25(l OCPLatency) OCPLatency {
	for i := range l.Active {
		l.Active[i].Read = 0
	}
	l.NoRead = true
	return l
}

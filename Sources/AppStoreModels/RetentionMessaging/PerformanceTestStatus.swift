/// Where a performance test stands (Apple's `PerformanceTestStatus`).
public struct PerformanceTestStatus: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Still running: some requests have not been answered or have not been sent.
    public static let pending = Self(rawValue: "PENDING")
    /// Finished, with a success rate at or above the threshold: a production URL may be configured.
    public static let pass = Self(rawValue: "PASS")
    /// Finished, below the threshold.
    public static let fail = Self(rawValue: "FAIL")

    public static let knownValues: [Self] = [.pending, .pass, .fail]
}

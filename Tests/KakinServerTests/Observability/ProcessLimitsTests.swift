import Foundation
import Testing

@testable import KakinServer
@testable import KakinLedger

@Suite("Open files", .serialized)
struct ProcessLimitsTests {
    @Test("raising the limit never lowers it, and leaves the soft limit at the hard one")
    func raisingIsSafeToRepeat() throws {
        let raised = try #require(ProcessLimits.raiseOpenFileLimit())
        #expect(raised.after >= raised.before)
        #expect(ProcessLimits.openFileLimit == raised.after)
        #expect(ProcessLimits.raiseOpenFileLimit().map { $0.before == $0.after } == true)
    }

    @Test("/metrics counts the open descriptors and shows the limit")
    func descriptorsAreCounted() throws {
        let metrics = ServerMetrics()
        // Other tests open and close descriptors at the same time: only a lower bound holds, the
        // descriptors this test keeps open.
        let files = try (0..<200).map { _ in try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/null")) }
        defer { for file in files { try? file.close() } }
        let open = try #require(Self.value("kakin_process_open_fds", in: metrics.render()))
        #expect(open >= 200)
        #expect(Self.value("kakin_process_max_fds", in: metrics.render()) == ProcessLimits.openFileLimit.map { Double($0) })
    }

    static func value(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }
}

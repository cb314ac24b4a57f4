import Foundation
import Logging
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The log lines: text in swift-log's stream layout, JSON objects for collectors.
struct LogLineTests {
    @Test func aLineHasTimeLevelLabelSortedMetadataSourceAndMessage() {
        let line = TextLogLine.line(
            time: Date(timeIntervalSince1970: 1_795_397_882.75), level: .warning, label: "kakin.http",
            metadata: ["status": "500", "route": "/v1/transactions", "request_id": "abc"], source: "KakinServer",
            message: "request")
        #expect(
            line
                == "2026-11-23T01:38:02+0000 warning kakin.http : request_id=abc route=/v1/transactions status=500 [KakinServer] request\n"
        )
    }

    @Test func noMetadataLeavesNoFields() {
        let line = TextLogLine.line(
            time: Date(timeIntervalSince1970: 0), level: .info, label: "kakin", metadata: [:], source: "S",
            message: "ready")
        #expect(line == "1970-01-01T00:00:00+0000 info kakin : [S] ready\n")
    }

    @Test func aJSONLineHasEveryFieldAndTheMetadata() throws {
        let line = JSONLogLine.line(
            time: Date(timeIntervalSince1970: 0), level: .error, label: "kakin", metadata: ["route": "/health"],
            source: "S", message: "failed")
        #expect(line.hasSuffix("\n"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "error")
        #expect(object["label"] == "kakin")
        #expect(object["message"] == "failed")
        #expect(object["route"] == "/health")
        #expect(object["time"] == "1970-01-01T00:00:00.000Z")
    }

    @Test func metadataSetOnTheHandlerIsKeptAndReadBack() {
        var handler = TextLogHandler(label: "kakin")
        handler[metadataKey: "hb.request.id"] = "7"
        handler.logLevel = .warning
        #expect(handler[metadataKey: "hb.request.id"] == "7")
        #expect(handler.metadata.count == 1)
        #expect(handler.logLevel == .warning)
    }
}

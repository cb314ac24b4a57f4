import Foundation
import KakinCLI
import Testing

@Suite struct ServeCommandTests {
    @Test func invalidSettingsAreRefusedWithAClearMessage() {
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--port", "0"]) }
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--port", "9000", "--sandbox-port", "9000"])
        }
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--catalog", "/nonexistent.storekit"])
        }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--clawback-policy", "maybe"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--webhook", "no-secret"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--database", "mysql://db/x"]) }
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--database", "postgres://kakin@db/x?sslmode=sometimes"])
        }
    }

    @Test func aPostgreSQLLedgerIsAccepted() throws {
        _ = try KakinCommand.parseAsRoot([
            "serve", "--database", "postgres://kakin@127.0.0.1:5432/kakin?sslmode=disable",
        ])
    }

    @Test func defaultsParse() throws {
        _ = try KakinCommand.parseAsRoot(["serve", "--webhook", "https://example.com/hook=secret"])
    }
}

extension ServeCommandTests {
    @Test func aConfigurationFileIsReadAndFlagsWin() throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(
            #"{"port": 9100, "sandboxPort": 9101, "clawbackPolicy": "allowNegative"}"#, to: "kakin.json")
        _ = try KakinCommand.parseAsRoot(["serve", "--config", file])
        _ = try KakinCommand.parseAsRoot(["serve", "--config", file, "--port", "9200"])
        let clash = try scratch.write(#"{"port": 9100, "sandboxPort": 9100}"#, to: "clash.json")
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--config", clash]) }
        let broken = try scratch.write("{port", to: "broken.json")
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["serve", "--config", broken]) }
    }
}

import Foundation
import Testing

@testable import KakinCLI

/// `kakin demo`: product names, aligned columns with Japanese text, progress, restore in the background.
@Suite struct DemoCommandTests {
    @Test func wideCharactersTakeTwoColumns() {
        #expect(TerminalText.width("Remove Ads") == 10)
        #expect(TerminalText.width("広告削除") == 8)
        #expect(TerminalText.width("プレミアム（月額）") == 18)
        #expect(TerminalText.width("¥100") == 4)
        #expect(TerminalText.width("e\u{301}") == 1, "a combining accent takes no column")
        #expect(TerminalText.pad("広告削除", to: 10) == "広告削除  ")
        #expect(TerminalText.width(TerminalText.pad("全レベル解放とサウンド", to: 9)) == 9, "cut with an ellipsis")
    }

    @Test func tableColumnsLineUpByDisplayWidth() {
        let lines = TerminalText.table([
            ["product", "price", "buy as"], ["広告削除", "¥100", "removeAd"], ["Kakinプレミアム", "¥480", "premium.monthly"],
        ])
        let columns = lines.dropFirst().map { line in
            TerminalText.width(String(line[..<line.range(of: "¥")!.lowerBound]))
        }
        #expect(Set(columns).count == 1, "\(lines)")
        #expect(lines[0].hasPrefix("product") && lines[0].hasSuffix("buy as"))
    }

    @Test func progressBars() {
        #expect(TerminalText.progressBar(0) == "[....................]   0%")
        #expect(TerminalText.progressBar(0.5, width: 10, secondsLeft: 3) == "[#####.....]  50% 3s left")
        #expect(TerminalText.progressBar(1, width: 4, secondsLeft: -1) == "[####] 100%")
    }

    @Test(arguments: [
        ("removeAd", "com.example.kakin.removeAd"), ("premium.monthly", "com.example.kakin.premium.monthly"),
        ("com.example.kakin.premium.yearly", "com.example.kakin.premium.yearly"),
    ])
    func shortNamesMayHoldDots(typed: String, productID: String) throws {
        let demo = try DemoCommand.parse([])
        #expect(demo.productID(typed) == productID)
        #expect(demo.productID(demo.shortName(productID)) == productID)
    }

    @Test func theDemoDataFolderIsIgnoredByGit() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let ignored = try String(contentsOf: root.appendingPathComponent(".gitignore"), encoding: .utf8)
        #expect(ignored.split(separator: "\n").contains("/.kakin-demo/"))
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aJapaneseStorefrontSessionEndToEnd() async throws {
        let stack = try await CrashRecoveryTests.Stack()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await stack.run { demo in
            let bought = try await demo.runCapturing(
                "products\nbuy premium.monthly\nbuy removeAd\nstatus\nquit\n", user: "yuki", tester: "jp",
                directory: directory, device: UUID().uuidString, crashAt: nil, storefront: "JPN")
            #expect(bought.status == 0)
            let lines = bought.output.split(separator: "\n").map(String.init)
            let rows = lines.filter { $0.contains("¥") }
            #expect(rows.contains { $0.hasPrefix("広告削除") && $0.hasSuffix("removeAd") }, "\(bought.output)")
            #expect(rows.contains { $0.hasSuffix("premium.monthly") })
            let priceColumns = Set(rows.map { TerminalText.width(String($0[..<$0.range(of: "¥")!.lowerBound])) })
            #expect(priceColumns.count == 1, "prices line up:\n\(rows.joined(separator: "\n"))")
            #expect(lines.contains { $0.hasPrefix("purchased プレミアム（月額）") })
            #expect(lines.last { $0.contains("points:") }?.contains("(no ads)") == true)

            // A fresh device restores in the background; the next command runs before it ends.
            let restored = try await demo.runCapturing(
                "restore\nstatus\nquit\n", user: "yuki", tester: "jp", directory: directory.appendingPathComponent("b"),
                device: UUID().uuidString, crashAt: nil, storefront: "JPN")
            #expect(restored.status == 0)
            let output = restored.output
            #expect(output.contains("restoring in the background"))
            let restoredLine = try #require(output.range(of: "restored 2:"), "\(output)")
            #expect(output.range(of: "restoring in the background")!.lowerBound < restoredLine.lowerBound)
        }
        try await stack.store.shutdown()
    }
}

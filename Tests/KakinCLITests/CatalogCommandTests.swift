import Foundation
import KakinCLI
import KakinTestSupport
import Testing

@Suite struct CatalogCommandTests {
    static let example = ExampleApp.storeKitFile.path

    @Test func theExampleCatalogPasses() async throws {
        let output = try await kakin("catalog", "lint", Self.example)
        #expect(output.exitCode == 0)
        #expect(output.standardOutput == "")
        #expect(output.standardError == "\(Self.example): no problems")
    }

    @Test func aForeignBundleIDGivesWarningsButExitsZero() async throws {
        let output = try await kakin("catalog", "lint", "--bundle-id", "org.other.app", Self.example)
        #expect(output.exitCode == 0)
        let lines = output.standardOutput.split(separator: "\n")
        #expect(lines.count == 9)
        #expect(
            lines.first
                == "\(Self.example): warning: com.example.kakin.removeAd (products[0].productID): the product ID does not start with the bundle ID \"org.other.app.\""
        )
        #expect(output.standardError == "\(Self.example): 0 errors, 9 warnings")
    }

    @Test func errorsArePrintedOneALineAndExitOne() async throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(
            #"""
            {"products":[
              {"productID":"com.example.app.coins-100","type":"Consumable",
               "localizations":[{"displayName":"Coins","description":"Coins","locale":"en_US"}]},
              {"productID":"com.example.app.pack","type":"Consumable","displayPrice":"0.99",
               "localizations":[{"displayName":"Pack","description":"A pack of sounds.","locale":"en_US"}]}]}
            """#, to: "Bad.storekit")
        _ = try scratch.write(
            #"{"bundleID":"com.example.app","hostedContent":{"com.example.app.pack":{"contentVersion":"1.0"}}}"#,
            to: "Bad.catalog.json")
        let output = try await kakin("catalog", "lint", file)
        #expect(output.exitCode == 1)
        #expect(
            output.standardOutput.split(separator: "\n").map(String.init) == [
                "\(file): error: com.example.app.coins-100 (products[0].productID): a product ID may contain only letters, digits, underscores and periods",
                "\(file): error: com.example.app.coins-100 (products[0].displayPrice): the product has no price",
                "\(file): error: com.example.app.coins-100 (products[0].localizations[0].description): the localization (en_US) has a description of 5 characters; App Store Connect needs at least 10",
                "\(file): error: com.example.app.pack (products[1]): only non-consumables can have hosted content, and this is a Consumable",
            ])
        #expect(output.standardError == "\(file): 4 errors, 0 warnings")
    }

    @Test func unreadableInputIsOneLineAndExitOne() async throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(#"{"products":[{"productID":7}]}"#, to: "Broken.storekit")
        let output = try await kakin("catalog", "lint", file)
        #expect(output.exitCode == 1)
        #expect(output.standardError.hasPrefix("error: \(file) is not a .storekit catalog: at products[0].productID"))
        let missing = try await kakin("catalog", "lint", scratch.path("none.storekit"))
        #expect(missing.exitCode == 1)
        #expect(missing.standardError.contains("no such file"))
    }
}

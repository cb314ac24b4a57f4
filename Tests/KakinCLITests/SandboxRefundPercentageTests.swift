import Testing

@testable import KakinCLI

@Suite struct SandboxRefundPercentageTests {
    @Test(arguments: [("50", 50_000), ("67.932", 67_932), ("0.015", 15), ("100", 100_000), ("33.3", 33_300)])
    func aPercentIsReadInMilliunits(text: String, milliunits: Int) {
        #expect(SandboxRefundCommand.milliunits(text) == milliunits)
    }

    @Test(arguments: ["0", "0.000", "100.001", "101", "-5", "50.", ".5", "1.2345", "1e3", "", "fifty"])
    func anythingElseIsRefused(text: String) {
        #expect(SandboxRefundCommand.milliunits(text) == nil)
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["sandbox", "refund", "1", "--percentage", text])
        }
    }

    @Test func theOptionParses() throws {
        let refund = try #require(
            try KakinCommand.parseAsRoot(["sandbox", "refund", "42", "--percentage", "50"]) as? SandboxRefundCommand)
        #expect(refund.percentage == "50")
    }
}

import ArgumentParser
import Foundation
import Testing

@testable import KakinCLI

/// `kakin --version`: the release's version and the commit it was built from, in one line.
@Suite struct VersionTests {
    @Test func versionIsSemantic() {
        #expect(BuildInfo.version.wholeMatch(of: /\d+\.\d+\.\d+/) != nil, "\(BuildInfo.version)")
    }

    @Test func commitIsTwelveHexadecimalDigitsWhenKnown() {
        if let commit = BuildInfo.commit {
            #expect(commit.wholeMatch(of: /[0-9a-f]{12}/) != nil, "\(commit)")
        }
    }

    @Test func lineNamesTheCommitOrSaysItIsADevelopmentBuild() {
        #expect(BuildInfo.versionLine(version: "0.5.0", commit: "1a2b3c4d5e6f") == "kakin 0.5.0 (commit 1a2b3c4d5e6f)")
        #expect(BuildInfo.versionLine(version: "1.2.3", commit: nil) == "kakin 1.2.3 (development build)")
        // `kakin 0.5.0 (commit 1a2b3c4d5e6f)` or `kakin 0.5.0 (development build)`.
        let pattern = /kakin \d+\.\d+\.\d+ \((commit [0-9a-f]{12}|development build)\)/
        #expect(BuildInfo.versionLine.wholeMatch(of: pattern) != nil, "\(BuildInfo.versionLine)")
        #expect(BuildInfo.versionLine.hasPrefix("kakin \(BuildInfo.version) ("))
    }

    @Test func versionFlagPrintsTheLineAndExitsCleanly() throws {
        do {
            _ = try KakinCommand.parseAsRoot(["--version"])
            Issue.record("--version did not end the parse")
        } catch {
            #expect(KakinCommand.exitCode(for: error) == .success)
            #expect(KakinCommand.message(for: error) == BuildInfo.versionLine)
        }
    }

    /// The changelog's newest release is the version the binary reports, so a release never ships
    /// a version its changelog does not describe.
    @Test func changelogStartsAtThisVersion() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let changelog = try String(contentsOf: repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(
            changelog.firstMatch(of: /(?m)^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/), "no released version in CHANGELOG.md")
        #expect(String(newest.output.1) == BuildInfo.version)
    }
}

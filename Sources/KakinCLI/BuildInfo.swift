/// What this build of `kakin` is: the release's version and the commit it was built from.
///
/// The version is written here and nowhere else. A build from a working copy knows no commit and
/// says so; `scripts/release` builds from an export of the commit it releases and writes that
/// commit into its copy of this file (never into the checkout), so a released binary names the
/// exact sources it came from.
public enum BuildInfo {
    /// The release's version, in semantic versioning (`MAJOR.MINOR.PATCH`).
    public static let version = "0.5.0"

    /// The commit the binary was built from (12 hexadecimal digits), or `nil` for a build from a
    /// working copy. `scripts/release` replaces this line in its export of the sources.
    public static let commit: String? = nil

    /// The line `kakin --version` prints, such as `kakin 0.5.0 (commit 1a2b3c4d5e6f)`.
    public static var versionLine: String { versionLine(version: version, commit: commit) }

    /// The `--version` line for a version and an optional commit.
    static func versionLine(version: String, commit: String?) -> String {
        if let commit {
            "kakin \(version) (commit \(commit))"
        } else {
            "kakin \(version) (development build)"
        }
    }
}

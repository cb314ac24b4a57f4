import Foundation

/// Text for a terminal: widths as a terminal draws them (East Asian wide and fullwidth characters
/// take two columns, combining marks none), padding by those widths, and a progress line that
/// redraws in place.
enum TerminalText {
    /// The columns `text` takes in a terminal.
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value == 0 { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if value == 0x200B || (0xFE00...0xFE0F).contains(value) { return 0 }
        return isWide(value) ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges, and emoji presentation.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `text` padded with spaces to `columns` (cut, with an ellipsis, when longer).
    static func pad(_ text: String, to columns: Int) -> String {
        var result = ""
        var used = 0
        let total = width(text)
        if total <= columns { return text + String(repeating: " ", count: columns - total) }
        for character in text {
            let characterWidth = width(String(character))
            if used + characterWidth > columns - 1 { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…" + String(repeating: " ", count: max(0, columns - used - 1))
    }

    /// Rows as columns aligned by display width, two spaces apart; the last column is not padded.
    static func table(_ rows: [[String]]) -> [String] {
        let count = rows.map(\.count).max() ?? 0
        let widths = (0..<count).map { column in rows.map { column < $0.count ? width($0[column]) : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in index == row.count - 1 ? cell : pad(cell, to: widths[index]) }
                .joined(separator: "  ")
        }
    }

    /// `[#####.....]  50% 3s left` for a progress from 0 to 1.
    static func progressBar(_ progress: Double, width: Int = 20, secondsLeft: Double? = nil) -> String {
        let clamped = min(max(progress, 0), 1)
        let filled = Int((clamped * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = String(format: "%3d%%", Int((clamped * 100).rounded(.down)))
        let remaining = secondsLeft.map { $0 < 0 ? "" : String(format: " %.0fs left", $0) } ?? ""
        return "[\(bar)] \(percent)\(remaining)"
    }

    /// Carriage return and "erase the line": what redraws a line in place on a terminal.
    static let redraw = "\r\u{1B}[2K"

    /// Whether standard output is a terminal (then progress redraws in place; else one line per state).
    static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
}

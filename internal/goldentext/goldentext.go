// Package goldentext holds the texts whose features, signatures and wire bytes
// are pinned by the golden files in testdata/golden, shared by the tests of
// several packages. It is internal: the texts are test fixtures, not API.
package goldentext

// Texts covers ASCII, accented Latin, CJK, emoji, invalid UTF-8 and empty.
var Texts = []struct{ Name, Text string }{
	{"ascii", "The quick brown fox jumps over the lazy dog, then naps in the sun."},
	{"latin", "Crème brûlée, SMÖRGÅSBORD und Straße: à la française, s'il vous plaît!"},
	{"cjk", "日本語のテキストです。東京は日本の首都です。中文文本没有空格。"},
	{"emoji", "launch 🚀 party 🎉 with 👨‍👩‍👧 family 🇫🇷 and 👍🏽 thumbs"},
	{"invalid", "valid start \xff\xfe then \xc3\x28 broken \xe2\x82 end"},
	{"empty", ""},
}

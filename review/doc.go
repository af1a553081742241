// Package review holds the bot's decisions about a change that need no
// I/O: the record the bot keeps in its status comment (parsed only from
// the marker that ends the bot's own comment), comment commands, and the
// approval verdict (reviews + recorded state + rules → may it publish).
// The bot reads the forge and applies what these functions decide.
package review

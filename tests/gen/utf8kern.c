/*
 * utf8kern.c: a stand-in kernel whose functions are named in UTF-8 (C11 identifiers beyond
 * ASCII: two-, three- and four-byte characters), built by tests/t/opreport-encoding so that
 * opgen can place samples in them and opreport must cut their names by characters.
 */
__attribute__((noinline)) int größe_berechnen_für_alle_einträge(int x)
{
	return x * 3;
}

__attribute__((noinline)) int 全部の項目の大きさを計算する(int x)
{
	return x * 5;
}

__attribute__((noinline)) int 𝑓𝑜𝑙𝑑_𝑎𝑙𝑙_𝑡ℎ𝑒_𝑡ℎ𝑖𝑛𝑔𝑠(int x)
{
	return x * 7;
}

__attribute__((noinline)) int small(int x)
{
	return x + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return größe_berechnen_für_alle_einträge(argc) + 全部の項目の大きさを計算する(argc) +
	       𝑓𝑜𝑙𝑑_𝑎𝑙𝑙_𝑡ℎ𝑒_𝑡ℎ𝑖𝑛𝑔𝑠(argc) + small(argc);
}

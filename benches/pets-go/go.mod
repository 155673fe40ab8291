module petsgo

go 1.19
